"""Codex (npm `@openai/codex`) headless: `codex exec --json`.

It reads project skills from `.agents/skills/<name>/SKILL.md` (from the working directory up),
lists them to the model, which loads one by reading its SKILL.md with a shell command. The model
is a Responses API endpoint, named in `config.toml` in `CODEX_HOME` (inside the private HOME) as
the model provider `wikiskill` whose key is read from `WIKISKILL_CODEX_API_KEY`. Codex has no
turn limit of its own: a run is bounded by the agent's wall-time limit. Its own sandbox and
approval prompts are bypassed (`--dangerously-bypass-approvals-and-sandbox`): the task agent's
`agent.sandbox` decides what a command may touch.

`--json` prints `thread.started`, `turn.started`, `item.started` / `item.updated` /
`item.completed` (items: `agent_message`, `reasoning`, `command_execution` with
`aggregated_output` and `exit_code`, `file_change`, `mcp_tool_call`, `web_search`, `todo_list`,
`error` warnings), then `turn.completed` with `usage` or `turn.failed` / `error`. No cost is
reported.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import ClassVar

from ...contracts.coding_agent import CliRun, CliTranscript, bare_model
from ...core.parts import CLI_PRESET
from ...llm.chat import Message
from ...store.traces import Usage
from .reading import Event, events, function_call, note, skills_read

KEY_VARIABLE = "WIKISKILL_CODEX_API_KEY"
OPENAI_API = "https://api.openai.com/v1"


def _toml(value: object) -> str:
    return json.dumps(value) if isinstance(value, str) else str(value).lower()


@CLI_PRESET.builtin
class Codex:
    """OpenAI's Codex CLI (`codex exec`), with its JSON event stream."""

    program: ClassVar[str] = "codex"
    package: ClassVar[str] = "@openai/codex@0.171.0"
    """The npm package that installs `program`, at the version these presets are tested with."""
    skills_folder: ClassVar[str] = ".agents/skills"

    def argv(self, run: CliRun) -> list[str]:
        return [
            self.program,
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--ephemeral",
            "--dangerously-bypass-approvals-and-sandbox",
            "-m",
            bare_model(run.model),
            "--",
            run.prompt,
        ]

    def environment(self, run: CliRun) -> dict[str, str]:
        return {"CODEX_HOME": str(run.home / ".codex"), KEY_VARIABLE: run.api_key}

    def prepare_home(self, run: CliRun) -> None:
        folder = run.home / ".codex"
        folder.mkdir(parents=True, exist_ok=True)
        settings = {"model": bare_model(run.model), "model_provider": "wikiskill", "check_for_update_on_startup": False}
        provider = {
            "name": "wikiskill",
            "base_url": run.api_base or OPENAI_API,
            "env_key": KEY_VARIABLE,
            "wire_api": "responses",
        }
        lines = [f"{key} = {_toml(value)}" for key, value in settings.items()]
        lines += ["", "[history]", 'persistence = "none"', "", "[model_providers.wikiskill]"]
        lines += [f"{key} = {_toml(value)}" for key, value in provider.items()]
        (folder / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def version_argv(self) -> list[str]:
        return [self.program, "--version"]

    def parse(self, lines: Sequence[str], skills: Sequence[str]) -> CliTranscript:
        return parse_codex_events(lines, skills)


def parse_codex_events(lines: Sequence[str], skills: Sequence[str]) -> CliTranscript:
    """The transcript of one `codex exec --json` run: each completed item in order (a message's
    text, a command or other tool as a call with its result), the usage summed over turns, the
    copied `skills` whose SKILL.md a command read, the last message as the answer and, when a turn
    failed or none completed, why."""
    messages: list[Message] = []
    loaded: list[str] = []
    usage = Usage()
    completed, failed, reported = False, None, None
    for event in events(lines):
        kind = event.get("type")
        item = event.get("item")
        if kind == "item.completed" and isinstance(item, dict):
            _add_item(messages, item, loaded, skills)
        elif kind == "turn.completed":
            completed = True
            usage += _usage(event.get("usage"))
        elif kind == "turn.failed":
            usage += _usage(event.get("usage"))
            failed = _message(event.get("error")) or "the turn failed"
        elif kind == "error":  # also sent for a retry that may still succeed
            reported = _message(event) or "Codex reported an error"
    error = failed or (
        None if completed else reported or "the transcript has no turn.completed event: the run ended early"
    )
    usage.calls = sum(1 for message in messages if message["role"] == "assistant")
    answer = next((m["content"] for m in reversed(messages) if m["role"] == "assistant" and m["content"]), None)
    return CliTranscript(
        answer=None if error else answer, messages=messages, usage=usage, skills_loaded=loaded, error=error
    )


def _add_item(messages: list[Message], item: Event, loaded: list[str], skills: Sequence[str]) -> None:
    kind, item_id = item.get("type"), str(item.get("id", ""))
    if kind == "agent_message":
        messages.append({"role": "assistant", "content": str(item.get("text") or "")})
        return
    call = _call(kind, item)
    if call is None:
        return
    name, arguments, output = call
    last = messages[-1] if messages else None
    if last is None or last["role"] != "assistant":
        last = {"role": "assistant", "content": None}
        messages.append(last)
    last.setdefault("tool_calls", []).append(function_call(item_id, name, arguments))
    messages.append({"role": "tool", "tool_call_id": item_id, "content": output})
    note(loaded, skills_read(arguments, skills))


def _call(kind: object, item: Event) -> tuple[str, Event, str] | None:
    """A tool item as (name, arguments, output), or None for items that are not tool calls."""
    if kind == "command_execution":
        output = str(item.get("aggregated_output") or "")
        code = item.get("exit_code")
        if code not in (0, None):
            output = f"[exit code {code}] {output}"
        return "shell", {"command": str(item.get("command", ""))}, output
    if kind == "file_change":
        return "apply_patch", {"changes": item.get("changes") or []}, str(item.get("status", ""))
    if kind == "mcp_tool_call":
        name = f"{item.get('server', '')}.{item.get('tool', '')}"
        given = item.get("arguments")
        arguments = given if isinstance(given, dict) else {}
        result = item.get("result") if item.get("result") is not None else item.get("error")
        return name, arguments, json.dumps(result) if not isinstance(result, str) else result
    if kind == "web_search":
        return "web_search", {"query": str(item.get("query", ""))}, ""
    return None


def _usage(usage: object) -> Usage:
    """Codex counts cached input inside `input_tokens`."""
    if not isinstance(usage, dict):
        return Usage()
    return Usage(
        prompt_tokens=int(usage.get("input_tokens") or 0), completion_tokens=int(usage.get("output_tokens") or 0)
    )


def _message(value: object) -> str | None:
    text = value.get("message") if isinstance(value, dict) else value
    return " ".join(str(text).split()) if text else None
