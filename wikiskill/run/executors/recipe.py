"""What travels between the command and its workers: small picklable values, never local paths."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ...benchmarks import Split, Task
from ...core.config import Config
from ...knowledge.skills import Skill
from ...store.traces import Trajectory, Usage
from ...roles.wikitool import WikiShelf


@dataclass(frozen=True)
class AgentRecipe:
    """Everything a worker needs to build the task agent of one step: the config (which names the
    benchmark, so a worker loads or regenerates it), the skills' content, the seed and the wiki."""

    config: Config
    skills: tuple[Skill, ...]
    seed: int | None = None
    shelf: WikiShelf | None = None
    key: str = field(default_factory=lambda: uuid.uuid4().hex)
    """Tells recipes apart, so a worker builds each one's agent once."""


@dataclass(frozen=True)
class Place:
    """Where a worker finds the workspace's relative paths (`root`) and keeps its model-response
    cache (`state_dir`): the command's own folders for workers on this machine; None on a cluster
    node (the shipped working directory, and a folder of the worker's own)."""

    root: Path | None = None
    state_dir: Path | None = None


@dataclass(frozen=True)
class TaskReport:
    """A worker's answer for one task: its trajectory or its error, and the model usage the
    worker had not reported yet (so the command's ledger counts every call, failed tasks' too)."""

    task_id: str
    trajectory: Trajectory | None
    error: BaseException | None
    usage: dict[str, Usage]


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
