"""Reading Claude Code's `--output-format stream-json --verbose` transcript.

One JSON object a line: `system`/`init` (tools, skills, model), `assistant` events (a Messages
API `message`; one model response arrives as one event per content block, all with the
response's `message.id`), `user` events (`tool_result` blocks, and the text a skill injects when
it loads), and a closing `result` (`is_error`, `result`: the final text, `num_turns`, `usage`,
`total_cost_usd`). A run cut short has no `result` line. Claude Code counts cached input apart
from `input_tokens`, so the prompt tokens are their sum.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...store.traces import Usage
from .base import CliTranscript
from .reading import events, function_call, note, skills_read

SKILL_TOOL = "Skill"
"""Claude Code's tool that loads a skill: `{"skill": name}`."""


def parse_claude_stream(lines: Sequence[str], skills: Sequence[str]) -> CliTranscript:
    """The transcript of one run: messages, usage, the copied `skills` loaded (through the Skill
    tool or a read of their SKILL.md), the answer and, when the run failed, why."""
    messages: list[dict] = []
    loaded: list[str] = []
    responses: dict[str, Usage] = {}  # the usage of each model response, by message id
    result: dict | None = None
    for event in events(lines):
        kind, message = event.get("type"), event.get("message")
        if kind == "assistant" and isinstance(message, dict):
            _add_blocks(messages, message, loaded, skills)
            responses[str(message.get("id") or len(responses))] = _usage(message.get("usage"))
        elif kind == "user" and isinstance(message, dict):
            messages += _user_messages(message.get("content"))
        elif kind == "result":
            result = event
    for message in messages:
        message.pop("_response", None)
    usage = sum(responses.values(), Usage())
    usage.calls = len(responses)
    if result is None:
        return CliTranscript(answer=None, messages=messages, usage=usage, skills_loaded=loaded,
                             error="the transcript has no result event: the run ended early")
    reported = _usage(result.get("usage"))
    if reported.tokens:
        usage = reported.model_copy(update={"calls": usage.calls})
    usage.cost_usd = float(result.get("total_cost_usd") or 0.0)
    if result.get("is_error") or str(result.get("subtype", "")).startswith("error_"):
        return CliTranscript(answer=None, messages=messages, usage=usage, skills_loaded=loaded,
                             error=_error_text(result))
    answer = result.get("result")
    return CliTranscript(answer=answer if isinstance(answer, str) else _last_text(messages), messages=messages,
                         usage=usage, skills_loaded=loaded)


def _add_blocks(messages: list[dict], message: dict, loaded: list[str], skills: Sequence[str]) -> None:
    """Add one assistant event's blocks; events of one response make one assistant message."""
    response = message.get("id")
    last = messages[-1] if messages else None
    if last is None or last["role"] != "assistant" or last.get("_response") != response:
        last = {"role": "assistant", "content": None, "_response": response}
        messages.append(last)
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and block.get("text"):
            last["content"] = "\n".join(filter(None, [last["content"], block["text"]]))
        elif block.get("type") == "tool_use":
            arguments = block.get("input") if isinstance(block.get("input"), dict) else {}
            last.setdefault("tool_calls", []).append(
                function_call(str(block.get("id", "")), str(block.get("name", "")), arguments))
            named = [str(arguments.get("skill", "")).rsplit(":", 1)[-1]] if block.get("name") == SKILL_TOOL else []
            note(loaded, [name for name in named if name in skills] + skills_read(arguments, skills))


def _user_messages(content: object) -> list[dict]:
    """A user event's tool results as `tool` messages, and the text a loaded skill injects."""
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    out: list[dict] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            text = _text(block.get("content"))
            out.append({"role": "tool", "tool_call_id": str(block.get("tool_use_id", "")),
                        "content": f"[tool error] {text}" if block.get("is_error") else text})
        elif block.get("type") == "text" and block.get("text"):
            out.append({"role": "user", "content": str(block["text"])})
    return out


def _text(content: object) -> str:
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def _usage(usage: object) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    prompt = sum(int(usage.get(key) or 0)
                 for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    return Usage(prompt_tokens=prompt, completion_tokens=int(usage.get("output_tokens") or 0))


def _last_text(messages: list[dict]) -> str | None:
    return next((m["content"] for m in reversed(messages) if m["role"] == "assistant" and m["content"]), None)


def _error_text(result: dict) -> str:
    errors = result.get("errors")
    text = "; ".join(map(str, errors)) if isinstance(errors, list) and errors else result.get("result")
    text = text or result.get("subtype") or "Claude Code reported an error"
    return " ".join(str(text).split())
