"""loop/steps/summary.py: a commit subject states games won (QA: tasks solved) over the scored
tasks, the mean score, and the tasks left out as infrastructure failures."""

from wikiskill.benchmarks import BenchmarkKind
from wikiskill.loop.steps.summary import of_trajectories, outcome
from wikiskill.store.traces import FailureKind, Trajectory


def played(task_id: str, score: float, infra: bool = False) -> Trajectory:
    return Trajectory(
        task_id=task_id,
        split="val",
        kind=BenchmarkKind.QA,
        question="?",
        score=score,
        failure=FailureKind.INFRA if infra else None,
        error="the container would not start" if infra else None,
    )


def test_an_interactive_suite_says_won_and_a_qa_suite_says_solved():
    assert outcome(3, 18, 0.42, interactive=True) == "won 3/18, score 0.420"
    assert outcome(3, 6, 0.5, interactive=False) == "solved 3/6, score 0.500"


def test_infrastructure_failures_are_left_out_of_the_counts_and_named():
    runs = [played("a", 1.0), played("b", 0.0), played("c", 0.0, infra=True)]
    assert of_trajectories(runs, interactive=False) == "solved 1/2, score 0.500, 1 infra"
