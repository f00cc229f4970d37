"""Gemini CLI (npm `@google/gemini-cli`) headless:
`gemini -p PROMPT -o stream-json --approval-mode yolo --skip-trust`.

It reads project skills from `.gemini/skills/<name>/SKILL.md`, lists them to the model and loads
one through its `activate_skill` tool (`{"name": name}`). The model is a Gemini API endpoint:
`GOOGLE_GEMINI_BASE_URL` (the server's root; the CLI appends `/v1beta/models/...`) with
`GEMINI_API_KEY`. The private HOME's `.gemini/settings.json` picks API-key auth, turns off
auto-update, usage statistics and telemetry, and holds the turn limit (`model.maxSessionTurns`;
over it the CLI exits with code 53). Its temporary files go to a folder in the private HOME.
`GEMINI_CLI_NO_RELAUNCH` keeps it from starting itself again in a second Node process with a
larger heap, which a one-task run does not need and which would double its start-up.

`stream-json` prints `init`, `message` (`role`, `content`, `delta: true` for the pieces of an
assistant reply), `tool_use` (`tool_name`, `tool_id`, `parameters`), `tool_result` (`tool_id`,
`status`, `output` or `error`), `error` (warnings) and a closing `result` (`status`, `error`,
`stats` with token counts). No cost is reported.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import ClassVar

from ...contracts.coding_agent import CliRun, CliTranscript, bare_model
from ...core.parts import CLI_PRESET
from ...llm.chat import Message
from ...store.traces import Usage
from .reading import Event, events, function_call, note, root_url, skills_read

SKILL_TOOL = "activate_skill"


@CLI_PRESET.builtin
class GeminiCli:
    """Google's Gemini CLI (`gemini`), headless with `stream-json` output."""

    program: ClassVar[str] = "gemini"
    package: ClassVar[str] = "@google/gemini-cli@0.61.0"
    """The npm package that installs `program`, at the version these presets are tested with."""
    skills_folder: ClassVar[str] = ".gemini/skills"

    def argv(self, run: CliRun) -> list[str]:
        return [
            self.program,
            f"--prompt={run.prompt}",
            "--output-format",
            "stream-json",
            "--approval-mode",
            "yolo",
            "--skip-trust",
            "--model",
            bare_model(run.model),
        ]

    def environment(self, run: CliRun) -> dict[str, str]:
        env = {"GEMINI_API_KEY": run.api_key, "TMPDIR": str(run.home / "tmp"), "GEMINI_CLI_NO_RELAUNCH": "true"}
        if run.api_base:
            env["GOOGLE_GEMINI_BASE_URL"] = root_url(run.api_base, ("/v1beta", "/v1"))
        return env

    def prepare_home(self, run: CliRun) -> None:
        folder = run.home / ".gemini"
        folder.mkdir(parents=True, exist_ok=True)
        (run.home / "tmp").mkdir(exist_ok=True)
        settings: dict[str, object] = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
        }
        if run.max_turns is not None:
            settings["model"] = {"maxSessionTurns": run.max_turns}
        (folder / "settings.json").write_text(json.dumps(settings, indent=1), encoding="utf-8")

    def version_argv(self) -> list[str]:
        return [self.program, "--version"]

    def parse(self, lines: Sequence[str], skills: Sequence[str]) -> CliTranscript:
        return parse_gemini_stream(lines, skills)


def parse_gemini_stream(lines: Sequence[str], skills: Sequence[str]) -> CliTranscript:
    """The transcript of one run: each model reply (its text pieces joined, its tool calls) and
    each tool result in order, the usage of the `result` event, the copied `skills` loaded (through
    `activate_skill` or a read of their SKILL.md), the last reply's text as the answer and, when
    the run failed or ended without a `result`, why."""
    messages: list[Message] = []
    loaded: list[str] = []
    result: Event | None = None
    warning = None
    for event in events(lines):
        kind = event.get("type")
        if kind == "message" and event.get("role") == "assistant":
            _reply(messages)["content"] = (_reply(messages)["content"] or "") + str(event.get("content") or "")
        elif kind == "tool_use":
            name, arguments = str(event.get("tool_name", "")), event.get("parameters")
            arguments = arguments if isinstance(arguments, dict) else {}
            _reply(messages).setdefault("tool_calls", []).append(
                function_call(str(event.get("tool_id", "")), name, arguments)
            )
            named = [str(arguments.get("name", ""))] if name == SKILL_TOOL else []
            note(loaded, [skill for skill in named if skill in skills] + skills_read(arguments, skills))
        elif kind == "tool_result":
            messages.append({"role": "tool", "tool_call_id": str(event.get("tool_id", "")), "content": _output(event)})
        elif kind == "error":
            warning = _text(event.get("message")) or warning
        elif kind == "result":
            result = event
    calls = sum(1 for message in messages if message["role"] == "assistant")
    stats = (result or {}).get("stats")
    stats = stats if isinstance(stats, dict) else {}
    usage = Usage(
        calls=calls,
        prompt_tokens=int(stats.get("input_tokens") or 0),
        completion_tokens=int(stats.get("output_tokens") or 0),
    )
    if result is None:
        error = warning or "the transcript has no result event: the run ended early"
    elif result.get("status") != "success":
        error = (
            _text(
                (result.get("error") or {}).get("message")
                if isinstance(result.get("error"), dict)
                else result.get("error")
            )
            or f"the run ended with status {result.get('status')!r}"
        )
    else:
        error = None
    answer = next((m["content"] for m in reversed(messages) if m["role"] == "assistant" and m["content"]), None)
    return CliTranscript(
        answer=None if error else answer, messages=messages, usage=usage, skills_loaded=loaded, error=error
    )


def _reply(messages: list[Message]) -> Message:
    """The model reply being streamed: the last message if it is the assistant's, else a new one."""
    if not messages or messages[-1]["role"] != "assistant":
        messages.append({"role": "assistant", "content": None})
    return messages[-1]


def _output(event: Event) -> str:
    if event.get("status") == "success":
        return str(event.get("output") or "")
    error = event.get("error")
    text = _text(error.get("message") if isinstance(error, dict) else error) or event.get("output", "")
    return f"[tool error] {text}"


def _text(value: object) -> str:
    return " ".join(str(value).split()) if value else ""
