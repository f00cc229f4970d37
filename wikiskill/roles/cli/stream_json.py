"""Reading the `stream-json` transcript that Qwen Code and Claude Code print headless.

One JSON object a line: `system` (init), `assistant` (a `message` whose `content` holds `text`
and `tool_use` blocks; one turn may arrive as several events), `user` (its `tool_result`
blocks), `stream_event` (ignored) and a closing `result` (`is_error`, `result`: the final text,
`usage`, `total_cost_usd` when the CLI prices its calls). A run cut short has no `result` line.
Lines that are not JSON objects (a warning printed to stdout) are skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ...store.traces import Usage
from .base import CliTranscript

SKILL_FILE = re.compile(r"([^/\\\s'\"`]+)[/\\]SKILL\.md\b")
"""A path that names a skill's SKILL.md: the folder before it is the skill's name."""
NO_RESULT = "the CLI ended without a result event"


@dataclass(frozen=True)
class SkillTools:
    """How one CLI loads a skill: the tool names whose input names it, under which keys."""

    names: frozenset[str]
    keys: tuple[str, ...] = ("skill",)


def events(lines: Iterable[str]) -> list[dict]:
    """The JSON objects among `lines`, in order."""
    found = []
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def parse_stream_json(lines: Sequence[str], skills: Sequence[str], skill_tools: SkillTools) -> CliTranscript:
    """The transcript of one run: OpenAI-style messages, usage, the copied `skills` it loaded (by
    `skill_tools`, or any tool whose input names `<skill>/SKILL.md`), the final answer and, when
    the run failed or ended without a `result` event, why."""
    messages: list[dict] = []
    loaded: list[str] = []
    turns = Usage()
    result: dict | None = None
    for event in events(lines):
        kind, message = event.get("type"), event.get("message") or {}
        if kind == "assistant":
            _add_assistant(messages, message.get("content") or [])
            turns += _usage(message.get("usage") or {}, calls=0)
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    for name in _skills_named(block, skills, skill_tools):
                        if name not in loaded:
                            loaded.append(name)
        elif kind == "user" and isinstance(message.get("content"), list):
            messages += [_tool_message(block) for block in message["content"]
                         if isinstance(block, dict) and block.get("type") == "tool_result"]
        elif kind == "result":
            result = event
    calls = sum(1 for m in messages if m["role"] == "assistant")
    if result is None:
        return CliTranscript(answer=None, messages=messages, usage=turns.model_copy(update={"calls": calls}),
                             skills_loaded=loaded, error=NO_RESULT)
    usage = _usage(result.get("usage") or {}, calls=int(result.get("num_turns") or calls))
    if not usage.tokens:
        usage = turns.model_copy(update={"calls": usage.calls})
    usage.cost_usd = float(result.get("total_cost_usd") or result.get("cost_usd") or 0.0)
    if result.get("is_error"):
        return CliTranscript(answer=None, messages=messages, usage=usage, skills_loaded=loaded,
                             error=_error_text(result))
    answer = result.get("result")
    if not isinstance(answer, str):
        answer = next((m["content"] for m in reversed(messages) if m["role"] == "assistant" and m["content"]), None)
    return CliTranscript(answer=answer, messages=messages, usage=usage, skills_loaded=loaded)


def _add_assistant(messages: list[dict], content: list) -> None:
    """Append one event's blocks; consecutive assistant events are one turn, one message."""
    if not messages or messages[-1]["role"] != "assistant":
        messages.append({"role": "assistant", "content": ""})
    turn = messages[-1]
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and block.get("text"):
            turn["content"] = "\n".join(filter(None, [turn["content"], block["text"]]))
        elif block.get("type") == "tool_use":
            turn.setdefault("tool_calls", []).append({
                "id": str(block.get("id", "")), "type": "function",
                "function": {"name": str(block.get("name", "")),
                             "arguments": json.dumps(block.get("input") or {}, ensure_ascii=False)},
            })


def _tool_message(block: dict) -> dict:
    content = block.get("content")
    if isinstance(content, list):
        content = "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    text = "" if content is None else str(content)
    if block.get("is_error"):
        text = f"[tool error] {text}"
    return {"role": "tool", "tool_call_id": str(block.get("tool_use_id", "")), "content": text}


def _usage(usage: dict, calls: int) -> Usage:
    """Tokens of a `usage` object. Where `total_tokens` is given, the prompt is what the output
    leaves of it (Qwen Code counts cached input inside `input_tokens`); otherwise cached input
    is added (Claude Code counts it apart)."""
    output = int(usage.get("output_tokens") or 0)
    if usage.get("total_tokens"):
        prompt = int(usage["total_tokens"]) - output
    else:
        prompt = sum(int(usage.get(key) or 0) for key in
                     ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    return Usage(calls=calls, prompt_tokens=max(prompt, 0), completion_tokens=output)


def _skills_named(block: dict, skills: Sequence[str], tools: SkillTools) -> list[str]:
    """The copied skills one tool call loads: by the skill tool's argument, or a SKILL.md path."""
    arguments = block.get("input") or {}
    if not isinstance(arguments, dict):
        return []
    named: list[str] = []
    if block.get("name") in tools.names:
        for key in tools.keys:
            value = str(arguments.get(key) or "")
            name = value.rsplit(":", 1)[-1].strip()
            if name in skills:
                named.append(name)
    for value in _strings(arguments):
        named += [match for match in SKILL_FILE.findall(value) if match in skills]
    return named


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def _error_text(result: dict) -> str:
    error = result.get("error")
    text = error.get("message") if isinstance(error, dict) else error
    text = text or result.get("result") or result.get("subtype") or "the CLI reported an error"
    return " ".join(str(text).split())
