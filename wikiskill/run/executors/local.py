"""The `local` executor: every task on one event loop in the command's process."""

from __future__ import annotations

from collections.abc import Callable

from ...benchmarks import Task
from ...contracts.roles import Roles
from ...contracts.running import AgentRecipe, Place
from ...core.config import Config
from ...core.parts import EXECUTOR
from ...llm.meter import Meter
from ...store.results import ResultCache
from ...store.traces import Trajectory
from ..runner import run_tasks


@EXECUTOR.builtin
class LocalLoop:
    """Builds the agent with the command's own team, so a host's model factory (which cannot
    cross processes) works here."""

    def __init__(self, team: Roles):
        self.team = team

    @classmethod
    def open(cls, config: Config, place: Place, team: Roles) -> LocalLoop:
        return cls(team)

    def run(
        self,
        recipe: AgentRecipe,
        tasks: list[Task],
        concurrency: int,
        meter: Meter,
        cache: ResultCache | None = None,
        on_done: Callable[[Trajectory], None] | None = None,
    ) -> list[Trajectory]:
        agent = self.team.agent(list(recipe.skills), recipe.seed, recipe.shelf)
        return run_tasks(tasks, agent, concurrency, meter, cache, on_done)

    def close(self) -> None:
        pass
