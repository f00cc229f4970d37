"""What travels between the command and its workers: small picklable values, never local paths
(and the `protocols.AgentRecipe` sent before them)."""

from __future__ import annotations

from dataclasses import dataclass

from ...benchmarks import Split, Task
from ...contracts.running import AgentRecipe
from ...roles.settings import Role
from ...store.traces import Trajectory, Usage
from ..infra import TryAgain


@dataclass(frozen=True)
class TaskReport:
    """A worker's answer for one task: its trajectory or its error, and the model usage the
    worker had not reported yet (so the command's ledger counts every call, failed tasks' too).
    For an assignment that `moves`, `again` (no trajectory) says its try failed on infrastructure
    with retries left."""

    task_id: str
    trajectory: Trajectory | None
    error: BaseException | None
    usage: dict[Role, Usage]
    again: TryAgain | None = None


@dataclass(frozen=True)
class Assignment:
    """One task for a worker, by id: the worker takes the task from its own copy of the benchmark
    (a generated game's file is then one on the worker's machine), with the recipe sent before.
    An assignment that `moves` is tried once, an infrastructure failure handed back to be retried
    on another worker, after the tries that failed `earlier` for those reasons (`run/infra.py`)."""

    recipe_key: str
    split: Split
    task_id: str
    moves: bool = False
    earlier: tuple[str, ...] = ()

    @classmethod
    def of(cls, recipe: AgentRecipe, task: Task) -> Assignment:
        return cls(recipe.key, task.split, task.id)
