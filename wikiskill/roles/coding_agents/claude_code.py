"""Claude Code (npm `@anthropic-ai/claude-code`) headless:
`claude --print --output-format stream-json --verbose --dangerously-skip-permissions -- PROMPT`.

It reads project skills from `.claude/skills/<name>/SKILL.md`, lists them to the model and loads
one through its `Skill` tool. The model is an Anthropic Messages API endpoint: `ANTHROPIC_BASE_URL`
(the server's root; Claude Code appends `/v1/messages`) and `ANTHROPIC_API_KEY`. Its settings,
sessions and memory live in `CLAUDE_CONFIG_DIR`, set inside the private HOME; the variables set
here turn off its auto-updater, telemetry, error reports and auto memory. As root, Claude Code
refuses to skip permission prompts unless told it is sandboxed (`IS_SANDBOX=1`), which is set
only then.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import ClassVar

from ...contracts.coding_agent import CliRun, CliTranscript, bare_model
from ...core.parts import CLI_PRESET
from .reading import root_url
from .stream_json import SkillTools, parse_stream_json

QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
}
"""Variables that keep a run to the model endpoint and out of memory it would carry over."""

SETTINGS = {"autoMemoryEnabled": False}
"""The private config dir's `settings.json`."""


@CLI_PRESET.builtin
class ClaudeCode:
    """Claude Code (`claude -p`), headless with `stream-json` output."""

    program: ClassVar[str] = "claude"
    package: ClassVar[str] = "@anthropic-ai/claude-code@2.1.332"
    """The npm package that installs `program`, at the version these presets are tested with."""
    skills_folder: ClassVar[str] = ".claude/skills"

    def argv(self, run: CliRun) -> list[str]:
        argv = [
            self.program,
            "--print",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            bare_model(run.model),
            "--dangerously-skip-permissions",
            "--no-session-persistence",
        ]
        if run.max_turns is not None:
            argv += ["--max-turns", str(run.max_turns)]
        return [*argv, "--", run.prompt]

    def environment(self, run: CliRun) -> dict[str, str]:
        env = {**QUIET, "CLAUDE_CONFIG_DIR": str(run.home / ".claude"), "ANTHROPIC_API_KEY": run.api_key}
        if run.api_base:
            env["ANTHROPIC_BASE_URL"] = root_url(run.api_base, ("/v1",))
        if os.geteuid() == 0:
            env["IS_SANDBOX"] = "1"
        return env

    def prepare_home(self, run: CliRun) -> None:
        folder = run.home / ".claude"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "settings.json").write_text(json.dumps(SETTINGS, indent=1), encoding="utf-8")

    def version_argv(self) -> list[str]:
        return [self.program, "--version"]

    def parse(self, lines: Sequence[str], skills: Sequence[str]) -> CliTranscript:
        return parse_stream_json(lines, skills, SkillTools(frozenset({"Skill"})))
