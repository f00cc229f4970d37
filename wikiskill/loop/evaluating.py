"""The evaluate context: what spends. Setting up an evaluation, its fingerprint, the one git
records for it, running tasks (their results cached, so a crash or a second look never
recomputes them), and the roles that call models; it reads through its `reader`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..benchmarks import Split, Task
from ..contracts.running import EXECUTORS, AgentRecipe, Executor, Place
from ..core.errors import BudgetExceeded, ModelError, WikiskillError
from ..core.parts import LOCAL_EXECUTOR
from ..knowledge.shelf import WikiShelf
from ..llm.meter import Meter
from ..run.executors.remote import WorkerDied
from ..run.team import Team
from ..store.evaluations import Evaluation, find_evaluation, outcomes_with_repeats, per_task_outcomes
from ..store.results import ResultCache
from ..store.traces import Trajectory
from ..store.workspace import Commit
from ..telemetry.spans import tasks_span
from .fingerprint import EvalSetup, digest, eval_setup
from .reading import Reader


@dataclass(frozen=True)
class Evaluated:
    """An evaluation just run: its scores, its setup, and the outcomes file to commit."""

    evaluation: Evaluation
    setup: EvalSetup
    runs: list[list[Trajectory]]
    """Each repeat's trajectories, in task order."""

    @property
    def outcomes(self) -> str:
        return outcomes_with_repeats(self.runs)

    def trailers(self, results_path: str) -> dict[str, object]:
        e = self.evaluation
        return {
            "score": e.mean,
            "skills_id": e.skills_id,
            "setup": e.setup,
            "fingerprint": e.fingerprint,
            "results": results_path,
            **retry_trailers(self.runs),
        }


def retry_trailers(runs: list[list[Trajectory]]) -> dict[str, int]:
    """`Retried`, `Retries` and `Infra-Left` of an evaluation's task runs (every repeat), when a
    run was retried or left infra; none otherwise. A run the result cache answered counts with
    the retries it took when it ran."""
    trajectories = [trajectory for run in runs for trajectory in run]
    retried = sum(1 for t in trajectories if t.retries)
    left = sum(1 for t in trajectories if t.infra)
    if not (retried or left):
        return {}
    return {"retried": retried, "retries": sum(t.retries for t in trajectories), "infra_left": left}


STOPS = (KeyboardInterrupt, ModelError, BudgetExceeded, WorkerDied)
"""What stops an evaluation part-way, its finished tasks kept."""


@dataclass(frozen=True)
class Kept:
    """What an evaluation stopped part-way leaves: the task runs already scored stay in the result
    cache, and the next try runs only the missing ones (an infrastructure failure is missing too)."""

    scored: int = 0
    missing: int = 0
    repeats: int = 1

    def __add__(self, other: Kept) -> Kept:
        return Kept(self.scored + other.scored, self.missing + other.missing, max(self.repeats, other.repeats))

    def text(self, command: str | None = None) -> str:
        """`8 scored tasks are kept, the next `wikiskill evolve` runs only the 2 missing`."""
        noun = "task run" if self.repeats > 1 else "task"
        kept = f"{self.scored} scored {noun}{' is' if self.scored == 1 else 's are'} kept"
        again = f"the next `wikiskill {command}`" if command else "the same command run again"
        return f"{kept}, {again} runs only the {self.missing} missing"


class Evaluator:
    def __init__(self, reader: Reader, team: Team, meter: Meter, root: Path, state_dir: Path, local: bool = False):
        """`local`: the tasks run here, on one worker (a host's model factory cannot cross processes)."""
        self.reader = reader
        self.team = team
        self.meter = meter
        self._root = root
        self._state_dir = state_dir
        self._local = local
        self._setups: dict[tuple[Split, int], EvalSetup] = {}
        self._recorded: dict[tuple[str, Split], tuple[Commit, Evaluation] | None] = {}
        self._executor: Executor | None = None
        self.test_sealed = True
        """No step scores the test split; `history.test_looks.looking_at_test` unseals it for a recorded look."""

    def close(self) -> None:
        """End the executor's workers (they serve every step of one command), and keep the speed
        the roles measured for the next command."""
        self.team.speeds.save()
        if self._executor is not None:
            self._executor.close()
            self._executor = None

    @property
    def executor(self) -> Executor:
        """The executor `config.task_executor` names, with `config.workers` workers, started by the
        first step that runs tasks."""
        if self._executor is None:
            config = self.reader.config
            if self._local:
                config = config.model_copy(update={"executor": LOCAL_EXECUTOR, "workers": 1})
            kind = EXECUTORS.load(config.task_executor)
            self._executor = kind.open(config, Place(self._root, self._state_dir), self.team)
        return self._executor

    def setup(self, split: Split = "val", first_repeat: int = 0) -> EvalSetup:
        """The evaluation setup of a split under the current settings. `first_repeat` > 0 gives
        fresh seeds (a confirmation run) while keeping everything else."""
        key = (split, first_repeat)
        if key not in self._setups:
            config = self.reader.config
            repeats = config.gate.repeats if split != "train" else 1
            self._setups[key] = eval_setup(config, self.reader.benchmark, split, repeats, first_repeat)
        return self._setups[key]

    def forget_setups(self) -> None:
        """The suite's splits changed (tasks left out as unsound): the setups so far no longer hold."""
        self._setups.clear()
        self._recorded.clear()

    def fingerprint(self, ref: str, split: Split = "val", first_repeat: int = 0) -> str:
        return self.setup(split, first_repeat).fingerprint(self.reader.skills_id(ref))

    def recorded(self, ref: str, split: Split = "val") -> tuple[Commit, Evaluation] | None:
        """The evaluation of `ref`'s skills under the current setup, if `ref`'s history records one.
        Kept by commit: a round asks about main several times while main stays put."""
        ws = self.reader.ws
        key = (ws.resolve(ref), split)
        if key not in self._recorded:
            self._recorded = {key: find_evaluation(ws, key[0], self.fingerprint(key[0], split))}
        return self._recorded[key]

    def evaluate(
        self,
        ref: str,
        split: Split,
        description: str,
        first_repeat: int = 0,
        cached: bool = True,
        tasks: list[Task] | None = None,
    ) -> Evaluated:
        """Run the agent with the skills at `ref` on every task of `split` (or on `tasks` of it),
        `repeats` times (`cached=False`: from scratch, neither reading nor writing the result
        cache). Stopped part-way (Ctrl-C, the provider, the budget, a worker's death), its error
        gets a note of what the result cache kept."""
        setup = self.setup(split, first_repeat)
        tree = self.reader.skills_id(ref)
        fingerprint = setup.fingerprint(tree)
        keys = self._cache_keys(ref, split, first_repeat)
        tasks = self.reader.tasks(split) if tasks is None else tasks
        runs = []
        try:
            for repeat, key in keys:
                label = description
                if setup.repeats != 1:
                    label = f"{description} (repeat {repeat + 1 - setup.first_repeat}/{setup.repeats})"
                seed = self.reader.config.seed + repeat
                runs.append(self.run_tasks(split, ref, label, key if cached else None, seed, tasks))
        except STOPS as stop:
            if cached:  # from the files alone: Ctrl-C reached git's own processes too
                stop.add_note(self._kept(keys, tasks).text())
            raise
        evaluation = per_task_outcomes(runs).evaluation(fingerprint, setup.id, tree)
        return Evaluated(evaluation, setup, runs)

    def kept(self, ref: str, split: Split, first_repeat: int = 0, tasks: list[Task] | None = None) -> Kept:
        """How much of `evaluate(ref, split, ...)` the result cache holds: what a stop keeps."""
        tasks = self.reader.tasks(split) if tasks is None else tasks
        return self._kept(self._cache_keys(ref, split, first_repeat), tasks)

    def _kept(self, keys: list[tuple[int, str]], tasks: list[Task]) -> Kept:
        scored = 0
        for _, key in keys:
            cache = ResultCache(self._state_dir, key)
            scored += sum(1 for task in tasks if cache.get(task.id) is not None)
        return Kept(scored, len(tasks) * len(keys) - scored, len(keys))

    def _cache_keys(self, ref: str, split: Split, first_repeat: int) -> list[tuple[int, str]]:
        """Each repeat of an evaluation of `ref`'s skills, with the key its results are cached under."""
        setup = self.setup(split, first_repeat)
        fingerprint = setup.fingerprint(self.reader.skills_id(ref))
        repeats = range(setup.first_repeat, setup.first_repeat + setup.repeats)
        return [(repeat, digest([fingerprint, repeat])) for repeat in repeats]

    def run_tasks(
        self,
        split: Split,
        ref: str,
        description: str,
        cache_key: str | None,
        seed: int,
        tasks: list[Task] | None = None,
    ) -> list[Trajectory]:
        """Every task of `split` (or `tasks` of it) with the skills at `ref`; finished tasks are
        cached under `cache_key` (a fingerprint), so a crash or a second look never recomputes
        them."""
        if split == "test" and self.test_sealed:
            raise WikiskillError("the test split is sealed: only a recorded look (eval --split test, uplift) scores it")
        reader, config = self.reader, self.reader.config
        tasks = reader.tasks(split) if tasks is None else tasks
        cache = ResultCache(self._state_dir, cache_key) if cache_key else None
        skills = reader.skills_at(ref)
        shelf = WikiShelf.from_files(reader.ws.read_files(ref, "wiki")) if config.agent.wiki_access else None
        recipe = AgentRecipe(config, tuple(skills), seed, shelf)
        with tasks_span(split, ref, len(tasks)), reader.reporter.tasks(description, len(tasks)) as on_done:
            return self.executor.run(recipe, tasks, config.concurrency, self.meter, cache, on_done)
