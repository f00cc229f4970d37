"""The command's side of executors whose workers are other processes or machines."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable

from ...benchmarks import Task
from ...contracts.running import AgentRecipe
from ...core.errors import BudgetExceeded, WikiskillError
from ...llm.meter import Meter
from ...store.results import ResultCache
from ...store.traces import Trajectory
from .recipe import Assignment, TaskReport


class WorkerDied(WikiskillError):
    """A worker process or actor ended while tasks were running on it."""


class RemoteExecutor(ABC):
    """Deals tasks to workers, at most `concurrency` at a time, each only after the budget check;
    every outcome is cached, counted and reported here as it arrives. A subclass moves recipes,
    assignments and outcomes between the command and its workers."""

    def run(
        self,
        recipe: AgentRecipe,
        tasks: list[Task],
        concurrency: int,
        meter: Meter,
        cache: ResultCache | None = None,
        on_done: Callable[[Trajectory], None] | None = None,
    ) -> list[Trajectory]:
        results: dict[str, Trajectory] = {}
        todo = []
        for task in tasks:
            cached = cache.get(task.id) if cache else None
            if cached is None:
                todo.append(task)
            else:
                results[task.id] = cached
                if on_done:
                    on_done(cached)
        if todo:
            meter.check()  # an exhausted budget starts no worker
            self.start()
            self.prepare(recipe)
            self._deal(recipe, todo, concurrency, meter, _Delivery(results, cache, on_done))
        return [results[task.id] for task in tasks]

    def _deal(self, recipe: AgentRecipe, todo: list[Task], concurrency: int, meter: Meter, delivery: _Delivery) -> None:
        waiting, running = deque(todo), 0
        errors: list[BaseException] = []
        while True:
            while waiting and running < concurrency and not errors:
                try:
                    meter.check()
                except BudgetExceeded as exc:
                    errors.append(exc)
                    break
                self.submit(Assignment.of(recipe, waiting.popleft()))
                running += 1
            if not running:
                break
            for outcome in self.finished():
                running -= 1
                for role, usage in outcome.usage.items():
                    meter.add(role, usage)
                if outcome.error is not None:
                    errors.append(outcome.error)
                else:
                    delivery(outcome)
        if errors:
            raise errors[0]

    @abstractmethod
    def start(self) -> None:
        """Start the workers, unless they are running (they serve every step of the command)."""

    @abstractmethod
    def prepare(self, recipe: AgentRecipe) -> None:
        """Hand every worker the recipe that the next assignments name."""

    @abstractmethod
    def submit(self, assignment: Assignment) -> None:
        """Start one task on the least busy worker."""

    @abstractmethod
    def finished(self) -> list[TaskReport]:
        """Wait for at least one outcome; raise WorkerDied (and end the rest) if a worker died."""

    @abstractmethod
    def close(self) -> None: ...


class _Delivery:
    """Where a finished trajectory goes: the cache first (a killed command keeps it), then the
    step's results and its progress."""

    def __init__(
        self, results: dict[str, Trajectory], cache: ResultCache | None, on_done: Callable[[Trajectory], None] | None
    ):
        self.results, self.cache, self.on_done = results, cache, on_done

    def __call__(self, outcome: TaskReport) -> None:
        trajectory = outcome.trajectory
        assert trajectory is not None
        if self.cache:
            self.cache.put(trajectory)
        self.results[trajectory.task_id] = trajectory
        if self.on_done:
            self.on_done(trajectory)
