"""What runs a command's tasks and shows its progress: the `Executor` and the values a worker is
handed (`AgentRecipe`, `Place`), and the `Reporter` that progress goes to."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..benchmarks import Task
from ..core.config import Config
from ..core.parts import EXECUTOR
from ..core.registry import Registry
from ..knowledge.shelf import WikiShelf
from ..knowledge.skills import Skill
from ..llm.meter import Meter
from ..store.results import ResultCache
from ..store.traces import Trajectory, Usage
from .roles import Roles


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


class Executor(Protocol):
    """Where a command's tasks run (config `executor`; `run/executors/`). Whatever the kind, the
    command owns the results: it answers cached tasks itself, starts a task only while the budget
    allows, writes each result to the cache as it arrives and keeps the cost ledger."""

    @classmethod
    def open(cls, config: Config, place: Place, team: Roles) -> Executor:
        """An executor for `config.workers` workers, started on first use. Workers on this
        machine use `place`; `team` builds agents in this process (a host's model factory
        cannot cross processes)."""

    def run(
        self,
        recipe: AgentRecipe,
        tasks: list[Task],
        concurrency: int,
        meter: Meter,
        cache: ResultCache | None = None,
        on_done: Callable[[Trajectory], None] | None = None,
    ) -> list[Trajectory]:
        """Each task at most once, results in task order. The budget is checked before a task
        starts; once it is reached or a task fails, no new task starts, the tasks in flight finish
        (and are cached), and the first error is raised."""

    def close(self) -> None:
        """End the workers this executor started; it may not be used again."""


class Reporter(Protocol):
    """Where progress goes: the CLI shows rich progress bars; the library default is silent."""

    def info(self, message: str) -> None: ...

    def tasks(self, description: str, total: int) -> AbstractContextManager[Callable[[Trajectory], None]]: ...

    def preparing(self, done: int, total: int) -> None:
        """Progress of one-off benchmark preparation (e.g. generating games)."""

    def turn(self, description: str, turn: int, usage: Usage) -> None:
        """A learning role's step (`description`, e.g. `r001 propose`) finished model turn `turn`;
        `usage` is the role's spend so far."""


EXECUTORS = Registry(EXECUTOR, Executor)
