"""The worker side of the executors that run tasks outside the command's process."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ...benchmarks import Benchmark, Split, Task, load_benchmark
from ...benchmarks.harbor import ContainerSuite
from ...contracts.running import AgentRecipe, Place
from ...core.errors import WikiskillError
from ...core.resources import cache_root
from ...environments.orphans import sweep_orphans
from ...llm.meter import Meter
from ...store.traces import Trajectory
from ..infra import RetryInfra, TryAgain
from ..team import Team
from .recipe import Assignment, TaskReport
from .shipping import SuiteArchive


class WorkerRuntime:
    """Builds each recipe's agent once (loading the benchmark once per config), runs assigned
    tasks, and hands back outcomes: the worker keeps no results and checks no budget."""

    def __init__(self, place: Place):
        self.place = place
        self.meter = Meter()
        self._benchmark: tuple[str, Benchmark] | None = None
        self._tasks: dict[Split, dict[str, Task]] = {}
        self._agents: dict[str, RetryInfra | Exception] = {}
        self._swept = False

    def prepare(self, recipe: AgentRecipe, suite: SuiteArchive | None = None) -> None:
        """Build the recipe's agent (its suite read from `suite`, unpacked into this machine's
        cache, when the command sent one); a failure is kept and becomes the outcome of its tasks."""
        if recipe.key in self._agents:
            return
        try:
            if suite is not None:
                recipe = suite.recipe_at(recipe, suite.unpacked(cache_root()))
            team = Team(recipe.config, self._benchmark_of(recipe), self.meter, self._state_dir())
            self._sweep(team)
            agent: RetryInfra | Exception = team.agent(list(recipe.skills), recipe.seed, recipe.shelf)
        except Exception as exc:  # noqa: BLE001 - reported with the first task that needs it
            agent = exc
        self._agents = {recipe.key: agent}

    def _sweep(self, team: Team) -> None:
        """On a cluster node, once per worker: remove the containers that workers of this node left
        when they died with it (their owner process is gone); the command's own machine has its
        pre-flight do this for the workspace."""
        if self.place.root is None and not self._swept and isinstance(team.benchmark, ContainerSuite):
            setup = team.containers()
            sweep_orphans(setup.runtime, setup.workspace)
            self._swept = True

    async def run(self, assignment: Assignment) -> TaskReport:
        outcome: Trajectory | TryAgain | None = None
        error = None
        try:
            agent = self._agents[assignment.recipe_key]
            if isinstance(agent, Exception):
                raise agent
            task = self._task(assignment)
            outcome = await (agent.once(task, assignment.earlier) if assignment.moves else agent.run(task))
        except Exception as exc:  # noqa: BLE001 - the command raises it, after the tasks in flight
            error = portable(exc)
        trajectory = outcome if isinstance(outcome, Trajectory) else None
        again = outcome if isinstance(outcome, TryAgain) else None
        return TaskReport(assignment.task_id, trajectory, error, self.meter.drain(), again)

    def _benchmark_of(self, recipe: AgentRecipe) -> Benchmark:
        config = recipe.config.model_dump_json()
        if self._benchmark is None or self._benchmark[0] != config:
            self._benchmark = (config, load_benchmark(recipe.config, self.place.root))
            self._tasks = {}
        return self._benchmark[1]

    def _task(self, assignment: Assignment) -> Task:
        if assignment.split not in self._tasks:
            assert self._benchmark is not None
            self._tasks[assignment.split] = {task.id: task for task in self._benchmark[1].tasks(assignment.split)}
        return self._tasks[assignment.split][assignment.task_id]

    def _state_dir(self) -> Path:
        if self.place.state_dir is not None:
            return self.place.state_dir
        directory = Path(tempfile.gettempdir()) / "wikiskill-worker"
        directory.mkdir(exist_ok=True)
        return directory


def portable(exc: BaseException) -> BaseException:
    """An error that pickles and means the same to the command: ours as they are, others wrapped."""
    if isinstance(exc, WikiskillError):
        return type(exc)(*exc.args)
    return WikiskillError(f"worker failed: {type(exc).__name__}: {exc}")
