"""What travels between the command and its workers: small picklable values, never local paths
(and the `protocols.AgentRecipe` sent before them)."""

from __future__ import annotations

from dataclasses import dataclass

from ...benchmarks import Split, Task
from ...contracts.running import AgentRecipe
from ...roles.settings import Role
from ...store.traces import Trajectory, Usage


@dataclass(frozen=True)
class TaskReport:
    """A worker's answer for one task: its trajectory or its error, and the model usage the
    worker had not reported yet (so the command's ledger counts every call, failed tasks' too)."""

    task_id: str
    trajectory: Trajectory | None
    error: BaseException | None
    usage: dict[Role, Usage]


@dataclass(frozen=True)
class Assignment:
    """One task for a worker, by id: the worker takes the task from its own copy of the benchmark
    (a generated game's file is then one on the worker's machine), with the recipe sent before."""

    recipe_key: str
    split: Split
    task_id: str

    @classmethod
    def of(cls, recipe: AgentRecipe, task: Task) -> Assignment:
        return cls(recipe.key, task.split, task.id)
