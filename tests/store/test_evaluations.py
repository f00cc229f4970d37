"""The per-task outcomes file keeps the skills each run loaded, counted over the repeats, and
reads them back with each task's scored runs: what the gate counts a changed skill's loads from."""

from wikiskill.benchmarks import BenchmarkKind
from wikiskill.store.evaluations import TaskLoads, outcomes_with_repeats, read_loads
from wikiskill.store.traces import FailureKind, Trajectory


def run(task: str, score: float, loaded: list[str], infra: bool = False) -> Trajectory:
    return Trajectory(
        task_id=task,
        split="val",
        kind=BenchmarkKind.QA,
        question="q",
        score=score,
        skills=["spell", "tally"],
        skills_loaded=loaded,
        failure=FailureKind.INFRA if infra else None,
        error="docker died" if infra else None,
    )


def test_each_tasks_loads_are_counted_over_its_scored_repeats_and_read_back():
    first = [run("a", 1.0, ["spell"]), run("b", 0.0, []), run("c", 0.0, ["spell"], infra=True)]
    second = [run("a", 1.0, ["spell", "tally"]), run("b", 1.0, ["tally"]), run("c", 0.0, ["spell"], infra=True)]
    text = outcomes_with_repeats([first, second])
    assert read_loads(text) == {
        "a": TaskLoads(2, {"spell": 2, "tally": 1}),
        "b": TaskLoads(2, {"tally": 1}),
    }  # c failed as infrastructure in every repeat: no run of it counts
    single = outcomes_with_repeats([first])
    assert read_loads(single) == {"a": TaskLoads(1, {"spell": 1}), "b": TaskLoads(1, {})}
    assert '"loads"' not in single.splitlines()[1]  # a run that loaded nothing writes no `loads`
