"""A coding-agent CLI run headless on each task (`agent.runner: qwen-code`, `claude-code`, `codex`,
`gemini-cli`, `command`, a preset plugin's name or a preset class's dotted path; the presets are
`core/parts.py` CLI_PRESET, the agent `roles/coding_agents/`): in a folder and HOME of its own, or
inside each task's container on a suite of containers."""

from __future__ import annotations

from typing import ClassVar

from ...benchmarks import Benchmark
from ...contracts.roles import Player
from ...contracts.runners import BaseRunner
from ...core.config import Config
from ...core.parts import CLI_PRESET, TASK_RUNNER
from ...core.registry import DOTTED_PATH, import_class
from ..settings import AgentSettings

CODE = ("roles.coding_agents.cli_agent", "roles.coding_agents.in_container")
"""The modules that decide what a CLI is shown and how its transcript is read, besides its preset's."""


def _registered(value: str) -> type | None:
    """The preset class a registered name picks (None for a dotted path, loaded only before a run)."""
    return import_class(CLI_PRESET.path(value)) if value in CLI_PRESET.names() else None


@TASK_RUNNER.builtin
class CliRunner(BaseRunner):
    """A coding-agent CLI preset, run headless on each task; it reads the skills as files."""

    name: ClassVar[str]
    reads_skill_files: ClassVar[bool] = True
    calls_model_from_container: ClassVar[bool] = True

    @classmethod
    def claim(cls, value: str) -> str | None:
        found = next((name for name in CLI_PRESET.names() if value.lower() == name.lower()), None)
        return found or (value if DOTTED_PATH.fullmatch(value) else None)

    @classmethod
    def described(cls) -> str:
        return f"{', '.join(CLI_PRESET.names())}, a preset's dotted path package.module:Class"

    @classmethod
    def own_settings(cls, value: str) -> frozenset[str]:
        reads_command = getattr(_registered(value), "reads_command", False)
        return frozenset({"timeout_s", "sandbox", *(["command"] if reads_command else [])})

    @classmethod
    def check_settings(cls, agent: AgentSettings) -> None:
        if "command" in cls.own_settings(agent.runner) and not agent.command:
            raise ValueError(
                f"runner: {agent.runner} needs `command`, the CLI's argv template "
                '(e.g. command: [mycli, --model, "{model}", "{prompt}"])'
            )

    @classmethod
    def check(cls, config: Config) -> None:
        from ..coding_agents.presets import check_cli

        check_cli(config.agent)

    @classmethod
    def player(cls, config: Config, benchmark: Benchmark) -> type[Player]:
        from ..coding_agents.cli_agent import CliAgent
        from ..coding_agents.in_container import ContainerCliAgent

        return ContainerCliAgent if benchmark.spec.containers else CliAgent

    @classmethod
    def fingerprint(cls, agent: AgentSettings, settings: dict[str, object]) -> dict[str, object]:
        """With the preset's arguments (the argv minus per-task values), the CLI's `--version`,
        the sandbox and the preset's own code."""
        from ..coding_agents.presets import preset_fingerprint

        return {**settings, "cli": preset_fingerprint(agent, agent.model or "")}

    @classmethod
    def code(cls, agent: AgentSettings) -> tuple[str, ...]:
        return CODE
