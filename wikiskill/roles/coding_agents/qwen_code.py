"""Qwen Code (npm `@qwen-code/qwen-code`) headless: `qwen -o stream-json --approval-mode yolo`.

It reads project skills from `.qwen/skills/<name>/SKILL.md`, lists them to the model and loads
one through its `skill` tool (`{"skill": name}`). The model is an OpenAI-compatible endpoint
given by flags; the key goes in `OPENAI_API_KEY` so it never shows in a process listing. The
private HOME's `.qwen/settings.json` turns off telemetry, usage statistics and the managed-memory
subagent that would otherwise run after the answer (its calls would count in the task's usage),
and runs its shell tool in a PTY: without one, Qwen Code settles a command when the process
exits, sometimes before its output is read, and the model is told a command printed nothing.
`QWEN_CODE_NO_RELAUNCH` keeps it from starting itself again in a second Node process with a
larger heap, which a one-task run does not need and which would double its start-up.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import ClassVar

from ...contracts.coding_agent import CliRun, CliTranscript, bare_model
from ...core.parts import CLI_PRESET
from .stream_json import SkillTools, parse_stream_json

SETTINGS = {
    "memory": {"enableManagedAutoMemory": False},
    "telemetry": {"enabled": False},
    "privacy": {"usageStatisticsEnabled": False},
    "tools": {"shell": {"enableInteractiveShell": True}},
}
"""The private HOME's `.qwen/settings.json`."""


@CLI_PRESET.builtin
class QwenCode:
    """Qwen Code (`qwen`), headless with `stream-json` output."""

    program: ClassVar[str] = "qwen"
    package: ClassVar[str] = "@qwen-code/qwen-code@0.24.4"
    """The npm package that installs `program`, at the version these presets are tested with."""
    skills_folder: ClassVar[str] = ".qwen/skills"

    def argv(self, run: CliRun) -> list[str]:
        argv = [self.program, "--auth-type", "openai"]
        if run.api_base:
            argv += ["--openai-base-url", run.api_base]
        argv += ["-m", bare_model(run.model), "-o", "stream-json", "--approval-mode", "yolo"]
        if run.max_turns is not None:
            argv += ["--max-session-turns", str(run.max_turns)]
        return [*argv, run.prompt]

    def environment(self, run: CliRun) -> dict[str, str]:
        return {"OPENAI_API_KEY": run.api_key, "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1", "QWEN_CODE_NO_RELAUNCH": "true"}

    def prepare_home(self, run: CliRun) -> None:
        folder = run.home / ".qwen"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "settings.json").write_text(json.dumps(SETTINGS, indent=1), encoding="utf-8")

    def version_argv(self) -> list[str]:
        return [self.program, "--version"]

    def parse(self, lines: Sequence[str], skills: Sequence[str]) -> CliTranscript:
        return parse_stream_json(lines, skills, SkillTools(frozenset({"skill"})))
