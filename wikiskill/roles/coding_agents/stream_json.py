"""Reading the `stream-json` transcript that Claude Code and Qwen Code print headless.

One JSON object a line: `system` (init), `assistant` (a Messages API `message` whose `content`
holds `text` and `tool_use` blocks; one model response may arrive as several events), `user`
(its `tool_result` blocks, and the text a skill injects when it loads), `stream_event`
(ignored) and a closing `result` (`is_error`, `result`: the final text, `usage`,
`total_cost_usd` when the CLI prices its calls). A run cut short has no `result` line. Lines
that are not JSON objects (a warning printed to stdout) are skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import count

from ...contracts.coding_agent import CliTranscript
from ...llm.chat import Message
from ...store.traces import Usage
from .reading import Event, events, function_call, note, skills_read

NO_RESULT = "the CLI ended early: its transcript has no result event"


@dataclass(frozen=True)
class SkillTools:
    """How one CLI loads a skill: the tool names whose input names it, under which keys."""

    names: frozenset[str]
    keys: tuple[str, ...] = ("skill",)


def parse_stream_json(lines: Sequence[str], skills: Sequence[str], skill_tools: SkillTools) -> CliTranscript:
    """The transcript of one run: OpenAI-style messages, usage, the copied `skills` it loaded (by
    `skill_tools`, or any tool whose input names `<skill>/SKILL.md`), the final answer and, when
    the run failed or ended without a `result` event, why."""
    messages: list[Message] = []
    loaded: list[str] = []
    responses: dict[object, Usage] = {}  # by message id: every event of a response repeats its usage
    unnamed = count()
    result: Event | None = None
    for event in events(lines):
        kind, message = event.get("type"), event.get("message")
        if kind == "assistant" and isinstance(message, dict):
            response = message.get("id") or ("unnamed", next(unnamed))
            _add_blocks(messages, message, loaded, skills, skill_tools)
            responses[response] = _usage(message.get("usage"))
        elif kind == "user" and isinstance(message, dict):
            messages += _user_messages(message.get("content"))
        elif kind == "result":
            result = event
    calls = sum(1 for m in messages if m["role"] == "assistant")
    usage = sum(responses.values(), Usage()).model_copy(update={"calls": calls})
    if result is None:
        return CliTranscript(answer=None, messages=messages, usage=usage, skills_loaded=loaded, error=NO_RESULT)
    reported = _usage(result.get("usage"))
    if reported.tokens:
        usage = reported.model_copy(update={"calls": calls})
    usage.cost_usd = float(result.get("total_cost_usd") or result.get("cost_usd") or 0.0)
    if result.get("is_error") or str(result.get("subtype", "")).startswith("error_"):
        return CliTranscript(
            answer=None, messages=messages, usage=usage, skills_loaded=loaded, error=_error_text(result)
        )
    answer = result.get("result")
    if not isinstance(answer, str):
        answer = next((m["content"] for m in reversed(messages) if m["role"] == "assistant" and m["content"]), None)
    return CliTranscript(answer=answer, messages=messages, usage=usage, skills_loaded=loaded)


def _add_blocks(
    messages: list[Message], message: Event, loaded: list[str], skills: Sequence[str], tools: SkillTools
) -> None:
    """Add one assistant event's blocks; consecutive assistant events are one turn, one message
    (Claude Code sends a response's blocks as events sharing its id, Qwen Code with ids of their
    own)."""
    last = messages[-1] if messages else None
    if last is None or last["role"] != "assistant":
        last = {"role": "assistant", "content": None}
        messages.append(last)
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and block.get("text"):
            last["content"] = "\n".join(filter(None, [last["content"], block["text"]]))
        elif block.get("type") == "tool_use":
            given = block.get("input")
            arguments = given if isinstance(given, dict) else {}
            last.setdefault("tool_calls", []).append(
                function_call(str(block.get("id", "")), str(block.get("name", "")), arguments)
            )
            named = (
                [str(arguments.get(key) or "").rsplit(":", 1)[-1].strip() for key in tools.keys]
                if block.get("name") in tools.names
                else []
            )
            note(loaded, [name for name in named if name in skills] + skills_read(arguments, skills))


def _user_messages(content: object) -> list[Message]:
    """A user event's tool results as `tool` messages, and the text a loaded skill injects."""
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    out: list[Message] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            text = _text(block.get("content"))
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": str(block.get("tool_use_id", "")),
                    "content": f"[tool error] {text}" if block.get("is_error") else text,
                }
            )
        elif block.get("type") == "text" and block.get("text"):
            out.append({"role": "user", "content": str(block["text"])})
    return out


def _text(content: object) -> str:
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def _usage(usage: object) -> Usage:
    """Tokens of a `usage` object. Where `total_tokens` is given, the prompt is what the output
    leaves of it (Qwen Code counts cached input inside `input_tokens`); otherwise cached input is
    added (Claude Code counts it apart)."""
    if not isinstance(usage, dict):
        return Usage()
    output = int(usage.get("output_tokens") or 0)
    if usage.get("total_tokens"):
        prompt = int(usage["total_tokens"]) - output
    else:
        prompt = sum(
            int(usage.get(key) or 0)
            for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
    return Usage(prompt_tokens=max(prompt, 0), completion_tokens=output)


def _error_text(result: Event) -> str:
    errors, error = result.get("errors"), result.get("error")
    if isinstance(errors, list) and errors:
        text: object = "; ".join(map(str, errors))
    else:
        text = error.get("message") if isinstance(error, dict) else error
    return " ".join(str(text or result.get("result") or result.get("subtype") or "the CLI reported an error").split())
