"""wikiskill's own LLM task agents (`agent.runner: builtin`, the default): the kind `agent.kind`
names, else the built-in kind that plays the suite's kind; the offline agent under the offline
model."""

from __future__ import annotations

from typing import ClassVar

from ...benchmarks import Benchmark, BenchmarkKind
from ...benchmarks.base import BenchmarkSpec
from ...benchmarks.registry import spec_of
from ...contracts.roles import TASK_AGENTS, AgentKind, Player
from ...contracts.runners import BaseRunner
from ...core.config import OFFLINE_MODEL, Config
from ...core.errors import ConfigError
from ...core.parts import TASK_AGENT, TASK_RUNNER
from ..settings import AgentSettings, Role, ToolProtocol

CODE = ("roles.offline.agent", "llm.toolcalls", "llm.context", "environments.container", "environments.network")
"""Besides the task-agent kinds' own modules: the offline agent, the request shaping the model
transport does for the agents (the text tool protocol, fitting into the context window), and the
container a built-in agent's commands run in on a suite of containers, with the network it gets."""


def agent_kind(config: Config, benchmark: Benchmark) -> type[AgentKind]:
    """The task agent `agent.kind` names (checked by the pre-flight: `run/preflight.py`), else the
    built-in one that plays the suite's kind."""
    if config.agent.kind is not None:
        return TASK_AGENTS.load(config.agent.kind)
    kinds = [TASK_AGENTS.load(name) for name in TASK_AGENT.builtins]
    return next(kind for kind in kinds if kind.plays is benchmark.spec.kind)


@TASK_RUNNER.builtin
class BuiltinRunner(BaseRunner):
    """wikiskill's own LLM agents, one kind per kind of suite, with the skills in their prompt."""

    name: ClassVar[str]
    plays: ClassVar[frozenset[BenchmarkKind]] = frozenset(BenchmarkKind)
    prompts_skills: ClassVar[bool] = True

    @classmethod
    def claim(cls, value: str) -> str | None:
        return cls.name if value.lower() == cls.name else None

    @classmethod
    def described(cls) -> str:
        return cls.name

    @classmethod
    def own_settings(cls, value: str) -> frozenset[str]:
        return frozenset({"kind", "edit_format"})

    @classmethod
    def check_suite(cls, config: Config, spec: BenchmarkSpec, source: str) -> None:
        """No built-in offline agent works in a folder, and the bash-block protocol works nowhere else."""
        if spec.kind is BenchmarkKind.WORKDIR and config.role(Role.AGENT).model == OFFLINE_MODEL:
            raise ConfigError(
                f"{source}: no built-in offline agent plays task folders such as {config.benchmark}: "
                "set agent.runner to a Python runner or a CLI, or give the agent a model"
            )
        if spec.kind is not BenchmarkKind.WORKDIR and config.agent.tool_protocol == ToolProtocol.BASH_BLOCK:
            raise ConfigError(
                f"{source}: agent.tool_protocol: bash_block is for workdir suites (task folders that are "
                f"scored by a command or a judge), not {config.benchmark}: use native, text or auto"
            )

    @classmethod
    def check(cls, config: Config) -> None:
        if config.role(Role.AGENT).model == OFFLINE_MODEL and not spec_of(config.benchmark).offline_playable:
            raise ConfigError(
                f"the offline model cannot play {config.benchmark}; it needs an LLM "
                "(set model, e.g. openai/gpt-4o-mini, or pass --model)"
            )

    @classmethod
    def player(cls, config: Config, benchmark: Benchmark) -> type[Player]:
        if config.role(Role.AGENT).model == OFFLINE_MODEL:
            from ..offline.agent import OfflineAgent

            return OfflineAgent
        return agent_kind(config, benchmark)

    @classmethod
    def fingerprint(cls, agent: AgentSettings, settings: dict[str, object]) -> dict[str, object]:
        """Without the runner's name, so setups from before runners existed keep their ids."""
        return {key: value for key, value in settings.items() if key != "runner"}

    @classmethod
    def code(cls, agent: AgentSettings) -> tuple[str, ...]:
        kinds = [path.partition(":")[0].removeprefix("wikiskill.") for path in TASK_AGENT.builtins.values()]
        return (*dict.fromkeys(kinds), *CODE)
