"""What a coding-agent CLI preset must do, and the values it is given and returns.

A preset knows one CLI: the argv that runs it headless on one task, the environment and private
config files that point it at the configured model (never at the user's own settings), where it
reads project skills, and how to read its streamed transcript. The task agent that drives a
preset owns the rest: the task's temporary folder and private HOME, copying the skills in, the
sandbox, the limits and killing the process tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from ..core.parts import CLI_PRESET
from ..core.registry import Registry
from ..store.traces import Usage


@dataclass(frozen=True)
class CliRun:
    """One task's run of a CLI, as its preset sees it."""

    prompt: str
    """The text given to the CLI as its task."""
    workdir: Path
    """The task's fresh working directory; project skills are copied under it."""
    home: Path
    """The run's private HOME (config folders such as `CODEX_HOME` go inside it)."""
    skills: tuple[str, ...]
    """The names of the skills copied in."""
    model: str
    """The agent's litellm model string as configured (`openai/qwen3-8b`); `bare_model` strips
    the provider prefix for a CLI that takes the server's own name."""
    api_base: str | None
    api_key: str
    """The provider's key from wikiskill's own environment, or a placeholder for a local server."""
    max_turns: int | None


def bare_model(model: str) -> str:
    """The model's name without litellm's provider prefix (`openai/qwen3-8b` -> `qwen3-8b`)."""
    return model.split("/", 1)[1] if "/" in model else model


@dataclass
class CliTranscript:
    """A CLI's streamed transcript, read."""

    answer: str | None
    """The final assistant message, or None when the run ended without one."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """OpenAI-style chat messages: `assistant` (with `content` and `tool_calls` as
    `{"id", "type": "function", "function": {"name", "arguments": <JSON text>}}`) and `tool`
    (with `tool_call_id` and `content`), in order."""
    usage: Usage = field(default_factory=Usage)
    skills_loaded: list[str] = field(default_factory=list)
    """Skills the CLI loaded: through its skill tool, or by reading their SKILL.md."""
    error: str | None = None
    """Why the run failed, as the CLI reported it (an error result, no final event)."""


class CliPreset(Protocol):
    """One CLI in headless mode. The agent makes it with no arguments, or through its classmethod
    `from_settings(agent settings)` when it has one; a preset whose argv is `agent.command` says so
    with `reads_command = True` (the setting is then required, and `init --command` gives it).
    A preset may name the npm `package` that installs its program (`@scope/name@version`): a
    program missing from PATH is then refused with the `npm install` that brings it."""

    name: ClassVar[str]
    """The `agent.runner` value that picks it."""
    program: ClassVar[str]
    """The executable, looked up on PATH."""
    skills_folder: ClassVar[str]
    """Where the CLI reads project skills, relative to the workdir (`.qwen/skills`)."""

    def argv(self, run: CliRun) -> list[str]:
        """The full command line, the program first."""

    def environment(self, run: CliRun) -> dict[str, str]:
        """Variables to set on top of the minimal environment the agent builds (PATH, HOME,
        TERM, LANG)."""

    def prepare_home(self, run: CliRun) -> None:
        """Write the CLI's settings into the private HOME (e.g. turn off its telemetry and
        memory), nothing outside it."""

    def version_argv(self) -> list[str]:
        """The command line that prints the CLI's version (its fingerprint)."""

    def parse(self, lines: Sequence[str], skills: Sequence[str]) -> CliTranscript:
        """The transcript from the CLI's stdout lines; `skills` are the names copied in, for
        telling which ones it loaded."""


CLI_PRESETS = Registry(CLI_PRESET, CliPreset)
