"""Any other CLI (`runner: command`): `agent.command` is its argv, each item a template.

Placeholders: `{prompt}`, `{workdir}`, `{home}`, `{skills_dir}` (where the skills are copied:
`.agents/skills` in the workdir, the folder several CLIs read), `{model}` (as configured),
`{bare_model}` (without the provider prefix), `{api_base}`, `{api_key}` and `{max_turns}`. A
literal brace is doubled (`{{`). The transcript is the plain stdout: the answer is its last
non-empty line, or the text of its last `<answer>` tags; a skill counts as loaded when the
output names its `<name>/SKILL.md`.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from typing import ClassVar

from ...contracts.coding_agent import CliRun, CliTranscript, bare_model
from ...core.errors import ConfigError, did_you_mean
from ...core.parts import CLI_PRESET
from ..settings import AgentSettings
from .reading import SKILL_FILE

PLACEHOLDERS = ("prompt", "workdir", "home", "skills_dir", "model", "bare_model", "api_base", "api_key", "max_turns")
ANSWER = re.compile(r"<answer>.*?</answer>", re.DOTALL | re.IGNORECASE)


@CLI_PRESET.builtin
class CommandPreset:
    """Any CLI, by the argv template of `agent.command`; its stdout is the transcript."""

    program: str = ""
    """The template's first item (set per instance)."""
    skills_folder: ClassVar[str] = ".agents/skills"
    reads_command: ClassVar[bool] = True
    """Its argv is `agent.command` (`contracts.coding_agent.CliPreset`)."""

    def __init__(self, template: Sequence[str]):
        if not template:
            raise ConfigError("agent.command: runner: command needs the CLI's argv template")
        for item in template:
            for _, field, _, _ in _fields(item):
                if field is not None and field not in PLACEHOLDERS:
                    hint = did_you_mean(f"{{{field}}}", [f"{{{name}}}" for name in PLACEHOLDERS])
                    raise ConfigError(
                        f"agent.command: {{{field}}} in {item!r} is no placeholder{hint} ({', '.join(PLACEHOLDERS)})"
                    )
        self.template = list(template)
        self.program = self.template[0]

    @classmethod
    def from_settings(cls, settings: AgentSettings) -> CommandPreset:
        return cls(settings.command)

    def argv(self, run: CliRun) -> list[str]:
        values = {
            "prompt": run.prompt,
            "workdir": str(run.workdir),
            "home": str(run.home),
            "skills_dir": str(run.workdir / self.skills_folder),
            "model": run.model,
            "bare_model": bare_model(run.model),
            "api_base": run.api_base or "",
            "api_key": run.api_key,
            "max_turns": "" if run.max_turns is None else str(run.max_turns),
        }
        return [item.format_map(values) for item in self.template]

    def environment(self, run: CliRun) -> dict[str, str]:
        return {}

    def prepare_home(self, run: CliRun) -> None:
        """Nothing to write: the template passes whatever the CLI needs."""

    def version_argv(self) -> list[str]:
        return [self.program, "--version"]

    def parse(self, lines: Sequence[str], skills: Sequence[str]) -> CliTranscript:
        text = "\n".join(lines).strip()
        last = next((line.strip() for line in reversed(lines) if line.strip()), None)
        answer = text if ANSWER.search(text) else last  # the agent reads the tags out of the whole text
        loaded = list(dict.fromkeys(name for name in SKILL_FILE.findall(text) if name in skills))
        messages = [{"role": "assistant", "content": text}] if text else []
        return CliTranscript(answer=answer, messages=messages, skills_loaded=loaded)


def _fields(item: str) -> list[tuple[str, str | None, str | None, str | None]]:
    try:
        return list(string.Formatter().parse(item))
    except ValueError as exc:
        raise ConfigError(f"agent.command: {item!r} is not a valid template: {exc}") from exc
