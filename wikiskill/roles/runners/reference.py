"""The agents that check a suite of containers rather than play it (`agent.runner: oracle | nop`,
`core/parts.py` REFERENCE_AGENT; `roles/reference_agent.py`)."""

from __future__ import annotations

from typing import ClassVar

from ...benchmarks import Benchmark, BenchmarkKind
from ...benchmarks.base import BenchmarkSpec
from ...contracts.roles import REFERENCE_AGENTS, Player
from ...contracts.runners import BaseRunner
from ...core.config import Config
from ...core.errors import ConfigError
from ...core.parts import REFERENCE_AGENT, TASK_RUNNER
from ..settings import AgentSettings


@TASK_RUNNER.builtin
class ReferenceRunner(BaseRunner):
    """A reference agent: `oracle` runs each task's solution, `nop` does nothing (`check-suite`)."""

    name: ClassVar[str]
    plays: ClassVar[frozenset[BenchmarkKind]] = frozenset(BenchmarkKind)

    @classmethod
    def claim(cls, value: str) -> str | None:
        return next((name for name in REFERENCE_AGENT.names() if value.lower() == name.lower()), None)

    @classmethod
    def described(cls) -> str:
        return f"or {' or '.join(REFERENCE_AGENT.names())} on a Harbor suite"

    @classmethod
    def check_suite(cls, config: Config, spec: BenchmarkSpec, source: str) -> None:
        if not spec.containers:
            raise ConfigError(
                f"{source}: agent.runner: {config.agent.runner} checks Harbor suites (harbor:PATH) "
                f"against their solutions; {config.benchmark} is not one"
            )

    @classmethod
    def player(cls, config: Config, benchmark: Benchmark) -> type[Player]:
        return REFERENCE_AGENTS.load(config.agent.runner)

    @classmethod
    def code(cls, agent: AgentSettings) -> tuple[str, ...]:
        return ("roles.reference_agent", "environments.container", "environments.network")
