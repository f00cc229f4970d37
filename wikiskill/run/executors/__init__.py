"""Where a command's tasks run (config `executor`): one protocol, one class per kind.

Whatever the kind, the command owns the results: it answers cached tasks itself, starts a task
only while the budget allows, writes each result to the cache as it arrives and keeps the cost
ledger. Workers get small picklable recipes and hand back outcomes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ...benchmarks import Task
from ...core.config import OFFLINE_MODEL, Config, ExecutorKind, Role
from ...llm.meter import Meter
from ..runner import ResultCache
from ...roles.team import Team
from ...store.traces import Trajectory
from .recipe import AgentRecipe, Place

__all__ = ["AgentRecipe", "Executor", "Place", "open_executor"]


class Executor(Protocol):
    def run(self, recipe: AgentRecipe, tasks: list[Task], concurrency: int, meter: Meter,
            cache: ResultCache | None = None, on_done: Callable[[Trajectory], None] | None = None) -> list[Trajectory]:
        """Each task at most once, results in task order. The budget is checked before a task
        starts; once it is reached or a task fails, no new task starts, the tasks in flight finish
        (and are cached), and the first error is raised."""

    def close(self) -> None:
        """End the workers this executor started; it may not be used again."""


def open_executor(config: Config, place: Place, team: Team) -> Executor:
    """The executor `config.task_executor` names, with `config.workers` workers (started on first use)."""
    if config.task_executor is ExecutorKind.PROCESSES:
        from .processes import ProcessPool

        return ProcessPool(place, config.workers, preload_litellm=config.role(Role.AGENT).model != OFFLINE_MODEL)
    if config.task_executor is ExecutorKind.RAY:
        from .ray_actors import RayActors

        return RayActors(place, config.workers, config.ray)
    from .local import LocalLoop

    return LocalLoop(team)
