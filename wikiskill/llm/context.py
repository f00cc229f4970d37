"""Fit a conversation into a model's context window.

Token counts are estimated from characters (a little pessimistically, so no tokenizer is
needed); a server that still reports an overflow gets the request again with a smaller budget.
The tools' schemas count against the window like any message. The system prompt and the task
(the messages before the first reply) are never dropped, nor is the latest turn; what gives way,
in this order:

1. older tool results are shortened to their head;
2. every long section (Markdown headings start them) of the messages other than the system
   prompt is cut to a common length, but not below KEPT_SECTION_CHARS, so no one trace or wiki
   page crowds out the rest;
3. the oldest tool turns are dropped, a call always with all its results (providers refuse a
   result without its call and a call without its result), and each run of dropped turns is
   replaced by one line saying how many were omitted, so the model knows;
4. the sections left are cut to a common length again, now down to MIN_SECTION_CHARS.

When even that cannot fit, ContextOverflow names the sizes: system prompt, tools, the messages
kept and the limit.

A role whose conversation grows by one tool result a turn (the proposer) need not wait for the
window: `stub_used_results` replaces the results the model has already answered by a stub naming
the call to make to see them again, in blocks, so the prompt per turn stays near flat and its
prefix (what a provider's prompt cache reads back) changes only once per block.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ..core.errors import ContextOverflow
from .chat import Message, ToolSpec

CHARS_PER_TOKEN = 3.2
MESSAGE_OVERHEAD_TOKENS = 6
KEPT_RECENT_MESSAGES = 2
SHORTENED_HEAD_CHARS = 300
KEPT_SECTION_CHARS = 2000
MIN_SECTION_CHARS = 120
OMITTED_TURNS = (
    "[{count} earlier tool turn(s) omitted to fit the model's context window: their calls and results are not shown.]"
)
"""The line that stands in for a run of dropped tool turns (a user message)."""
STUBBED_RESULT = (
    "[This {name} result ({chars} characters) was used and is left out to keep the prompt short: "
    "call {name} with {arguments} to see it again.]"
)
"""What stands in for a tool result `stub_used_results` left out."""
_SECTION = re.compile(r"^(?=#)", re.MULTILINE)


def estimate_tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + 1


def message_tokens(message: Message) -> int:
    return estimate_tokens(_text(message)) + MESSAGE_OVERHEAD_TOKENS


def conversation_tokens(messages: list[Message]) -> int:
    return sum(message_tokens(message) for message in messages)


def tools_tokens(tools: list[ToolSpec] | None) -> int:
    """The tools' schemas as they are sent natively (a request that describes them in its system
    prompt instead counts that text)."""
    return estimate_tokens(json.dumps(tools)) if tools else 0


def _text(message: Message) -> str:
    """What a message costs: its content, its calls as sent (id, name, arguments) and the id a
    result answers."""
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    if isinstance(content, list):  # content parts, e.g. text marked as a cache breakpoint
        text = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    if message.get("tool_calls"):
        text += json.dumps(message["tool_calls"])
    return text + (message.get("tool_call_id") or "")


@dataclass
class Fitted:
    messages: list[Message]
    notes: list[str] = field(default_factory=list)


def _marker(cut: int) -> str:
    return f"\n[... {cut:>7} characters cut to fit the model's context window ...]\n"


_MARKER_CHARS = len(_marker(0))
_CUT_BEFORE = re.compile(r"\n\[\.\.\. +(\d+) characters cut to fit the model's context window \.\.\.\]\n\Z")


def fit_messages(
    messages: list[Message], limit_tokens: int, tools: int = 0, role: str = "model", limit: str | None = None
) -> Fitted:
    """`messages` (never modified) fitted, with `tools` tokens of tool schemas beside them, into
    `limit_tokens`, with a note of what was cut. `limit` says where the limit comes from, for the
    error when it cannot fit."""
    if conversation_tokens(messages) + tools <= limit_tokens:
        return Fitted(messages)
    fitted = [dict(message) for message in messages]
    notes: list[str] = []
    head, recent = _head_end(fitted), _recent_start(fitted)
    room = limit_tokens - tools
    shortened = _shorten_results(fitted, range(head, recent), room)
    if shortened:
        notes.append(f"{shortened} older tool result(s) shortened")
    _cut_sections(fitted, room, KEPT_SECTION_CHARS, notes)
    fitted, dropped = _drop_oldest_turns(fitted, _turns(fitted, head, recent), room)
    if dropped:
        notes.append(f"{dropped} oldest tool turn(s) dropped")
    _cut_sections(fitted, room, MIN_SECTION_CHARS, notes)
    if conversation_tokens(fitted) > room:
        raise ContextOverflow(_too_long(fitted, tools, role, limit or f"{limit_tokens} prompt tokens", notes))
    return Fitted(fitted, notes)


def stub_used_results(messages: list[Message], budget_tokens: int) -> tuple[list[Message], set[str]]:
    """`messages` (never modified) with answered tool results stubbed, and the ids of the calls
    whose results were. Each reply of the model answers the results before it; when the answered
    results still shown pass `budget_tokens`, all of them are stubbed at once. Decided reply by
    reply from the start, so a later turn stubs what an earlier one did (the prefix stays put
    between blocks), and the results after the last reply are always shown."""
    calls: dict[str, tuple[str, str]] = {}  # call id -> (name, arguments as sent)
    shown: list[int] = []
    shown_tokens = 0
    stubbed: list[int] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            if shown_tokens > budget_tokens:
                stubbed += shown
                shown, shown_tokens = [], 0
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                calls[call.get("id", "")] = (function.get("name") or "the tool", function.get("arguments") or "{}")
        elif role == "tool" and isinstance(message.get("content"), str):
            shown.append(index)
            shown_tokens += message_tokens(message)
    view = list(messages)
    ids: set[str] = set()
    for index in stubbed:
        call_id = messages[index].get("tool_call_id") or ""
        name, arguments = calls.get(call_id, ("the tool", "{}"))
        stub = STUBBED_RESULT.format(name=name, chars=len(messages[index]["content"]), arguments=arguments)
        if len(stub) < len(messages[index]["content"]):
            view[index] = {**messages[index], "content": stub}
            ids.add(call_id)
    return view, ids


def sizes(messages: list[Message], tools: int) -> str:
    """The estimated sizes of a request's parts, for messages about the window."""
    system = conversation_tokens([m for m in messages if m.get("role") == "system"])
    others = [m for m in messages if m.get("role") != "system"]
    return (
        f"system prompt {system} tokens + tools {tools} tokens + {len(others)} message(s) "
        f"{conversation_tokens(others)} tokens"
    )


def _too_long(messages: list[Message], tools: int, role: str, limit: str, notes: list[str]) -> str:
    done = f", after {', '.join(notes)}" if notes else ""
    return (
        f"the {role}'s request does not fit its context window: {sizes(messages, tools)} kept (the task and "
        f"the latest turn{done}) > {limit}: set `{role}.context_window` to the model's real window if it "
        f"is larger, set a smaller `{role}.max_tokens`, or use a model with a larger window"
    )


def _head_end(messages: list[Message]) -> int:
    """Where the turns start: the system prompt and the task are the messages before the first reply."""
    return next((index for index, m in enumerate(messages) if m.get("role") == "assistant"), len(messages))


def _turn_end(messages: list[Message], start: int) -> int:
    """The end of the tool turn that starts at `start`: an assistant message with calls and the
    results that follow it."""
    end = start + 1
    while end < len(messages) and messages[end].get("role") == "tool":
        end += 1
    return end


def _recent_start(messages: list[Message]) -> int:
    """The first of the latest messages kept whole, moved back to the start of its tool turn."""
    recent = max(0, len(messages) - KEPT_RECENT_MESSAGES)
    while recent > 0 and messages[recent].get("role") == "tool":
        recent -= 1
    return recent


def _turns(messages: list[Message], start: int, stop: int) -> list[tuple[int, int]]:
    """The (start, end) of every tool turn that lies between `start` and `stop`."""
    turns, index = [], start
    while index < stop:
        if messages[index].get("role") == "assistant" and messages[index].get("tool_calls"):
            end = _turn_end(messages, index)
            if end <= stop:
                turns.append((index, end))
            index = end
        else:
            index += 1
    return turns


def _shorten_results(messages: list[Message], older: range, room: int) -> int:
    """Shorten long tool results in `older`, oldest first, until the messages fit `room`; the count."""
    excess_chars = int((conversation_tokens(messages) - room + len(messages)) * CHARS_PER_TOKEN) + 1
    shortened = 0
    for index in older:
        if excess_chars <= 0:
            break
        content = messages[index].get("content")
        if messages[index].get("role") != "tool" or not isinstance(content, str):
            continue
        if len(content) > SHORTENED_HEAD_CHARS * 2:
            short = content[:SHORTENED_HEAD_CHARS] + (
                f"\n[... {len(content) - SHORTENED_HEAD_CHARS} characters of an older result shortened "
                "to fit the context window; read it again if you need it ...]"
            )
            messages[index]["content"] = short
            excess_chars -= len(content) - len(short)
            shortened += 1
    return shortened


def _drop_oldest_turns(messages: list[Message], turns: list[tuple[int, int]], room: int) -> tuple[list[Message], int]:
    """Drop tool turns, oldest first, until the messages fit `room`; each run of adjacent dropped
    turns becomes one OMITTED_TURNS line. The messages kept and the count dropped."""
    total = conversation_tokens(messages)
    stub = message_tokens(_omitted(len(turns)))
    dropped: list[tuple[int, int]] = []
    for start, end in turns:
        if total <= room:
            break
        total -= conversation_tokens(messages[start:end])
        if not dropped or dropped[-1][1] != start:
            total += stub
        dropped.append((start, end))
    if not dropped:
        return messages, 0
    kept: list[Message] = []
    runs = iter(dropped)
    run = next(runs, None)
    index = 0
    while index < len(messages):
        if run is None or index < run[0]:
            kept.append(messages[index])
            index += 1
            continue
        count = 0
        while run is not None and run[0] == index:
            count, index, run = count + 1, run[1], next(runs, None)
        kept.append(_omitted(count))
    return kept, len(dropped)


def _omitted(count: int) -> Message:
    return {"role": "user", "content": OMITTED_TURNS.format(count=count)}


def _cut_sections(messages: list[Message], room: int, floor: int, notes: list[str]) -> None:
    """Cut the sections of non-system messages to the largest common cap that fits them into
    `room` tokens, or to `floor` characters when even that is not enough."""
    excess = conversation_tokens(messages) - room
    if excess <= 0:
        return
    excess_chars = int((excess + len(messages)) * CHARS_PER_TOKEN) + 1  # each message rounds up a token
    sections: list[tuple[int, str]] = []  # (message index, text)
    for index, message in enumerate(messages):
        if message.get("role") == "system" or not isinstance(message.get("content"), str):
            continue
        sections += [(index, text) for text in _SECTION.split(message["content"])]
    cap = _common_cap([len(text) for _, text in sections], excess_chars, floor)
    parts: dict[int, list[str]] = {}
    cut_count = 0
    for index, text in sections:
        if len(text) > cap + _MARKER_CHARS:
            before = _CUT_BEFORE.search(text)  # cut already: the marker counts every character cut
            earlier = int(before.group(1)) - _MARKER_CHARS if before else 0
            text = text[:cap] + _marker(len(text) - cap + earlier)
            cut_count += 1
        parts.setdefault(index, []).append(text)
    if cut_count:
        for index, texts in parts.items():
            messages[index]["content"] = "".join(texts)
        notes.append(f"{cut_count} long section(s) cut to {cap} characters")


def _common_cap(lengths: list[int], excess_chars: int, floor: int) -> int:
    """The largest cap (at least `floor`) whose cuts save `excess_chars`, markers included;
    `floor` when even that is not enough."""

    def saved(cap: int) -> int:
        return sum(length - cap - _MARKER_CHARS for length in lengths if length > cap + _MARKER_CHARS)

    low, high = floor, max(lengths, default=floor)
    if saved(low) < excess_chars:
        return low
    while low < high:
        middle = (low + high + 1) // 2
        if saved(middle) >= excess_chars:
            low = middle
        else:
            high = middle - 1
    return low
