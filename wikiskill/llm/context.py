"""Fit a conversation into a model's context window.

Token counts are estimated from characters (a little pessimistically, so no tokenizer is
needed); a server that still reports an overflow gets the request again with a smaller budget.
Older turns give way first (their tool results are shortened), then every long section of the
remaining messages is cut to a common length, so no one trace or wiki page crowds out the rest.
The system prompt is never cut: when it alone cannot fit, ContextOverflow says so.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ..core.errors import ContextOverflow

CHARS_PER_TOKEN = 3.2
MESSAGE_OVERHEAD_TOKENS = 6
KEPT_RECENT_MESSAGES = 2
SHORTENED_HEAD_CHARS = 300
MIN_SECTION_CHARS = 120
_SECTION = re.compile(r"^(?=#)", re.MULTILINE)


def estimate_tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + 1


def conversation_tokens(messages: list[dict], tools: list[dict] | None = None) -> int:
    tokens = sum(estimate_tokens(_text(m)) + MESSAGE_OVERHEAD_TOKENS for m in messages)
    return tokens + (estimate_tokens(json.dumps(tools)) if tools else 0)


def _text(message: dict) -> str:
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    for call in message.get("tool_calls") or []:
        text += call.get("function", {}).get("arguments") or ""
    return text


@dataclass
class Fitted:
    messages: list[dict]
    notes: list[str] = field(default_factory=list)


def _marker(cut: int) -> str:
    return f"\n[... {cut:>7} characters cut to fit the model's context window ...]\n"


_MARKER_CHARS = len(_marker(0))


def fit_messages(messages: list[dict], limit_tokens: int, tools: list[dict] | None = None,
                 role: str = "model") -> Fitted:
    """`messages` (never modified) fitted into `limit_tokens`, with a note of what was cut."""
    excess = conversation_tokens(messages, tools) - limit_tokens
    if excess <= 0:
        return Fitted(messages)
    fitted = [dict(message) for message in messages]
    notes = []
    excess_chars = int((excess + len(messages)) * CHARS_PER_TOKEN) + 1  # each message rounds up a token
    older = range(2, len(fitted) - KEPT_RECENT_MESSAGES)
    shortened = 0
    for index in older:
        if excess_chars <= 0:
            break
        content = fitted[index].get("content")
        if fitted[index].get("role") == "assistant" or not isinstance(content, str):
            continue
        if len(content) > SHORTENED_HEAD_CHARS * 2:
            short = content[:SHORTENED_HEAD_CHARS] + (
                f"\n[... {len(content) - SHORTENED_HEAD_CHARS} characters of an older result shortened "
                "to fit the context window; read it again if you need it ...]")
            fitted[index]["content"] = short
            excess_chars -= len(content) - len(short)
            shortened += 1
    if shortened:
        notes.append(f"{shortened} older tool result(s) shortened")
    if excess_chars > 0:
        excess_chars = _cut_sections(fitted, excess_chars, notes)
    if excess_chars > 0:
        system = next((m for m in fitted if m.get("role") == "system"), None)
        what = (f"the {role}'s system prompt ({estimate_tokens(_text(system))} tokens)" if system
                else f"the {role}'s request")
        raise ContextOverflow(f"{what} does not fit its context window of {limit_tokens} prompt tokens: "
                              "set a larger `context_window` if the model has one, or use a model with a larger one")
    return Fitted(fitted, notes)


def _cut_sections(messages: list[dict], excess_chars: int, notes: list[str]) -> int:
    """Cut the sections (Markdown headings start them) of non-system messages to a common cap;
    the chars still over the limit come back (zero or less when it fits)."""
    sections: list[tuple[int, int, str]] = []  # (message index, section index, text)
    for index, message in enumerate(messages):
        if message.get("role") == "system" or not isinstance(message.get("content"), str):
            continue
        sections += [(index, number, text) for number, text in enumerate(_SECTION.split(message["content"]))]
    lengths = sorted((len(text) for *_, text in sections), reverse=True)
    cap = _common_cap(lengths, excess_chars)
    if cap is None:
        return excess_chars
    parts: dict[int, list[str]] = {}
    cut_count = 0
    for index, _, text in sections:
        if len(text) > cap + _MARKER_CHARS:
            cut = len(text) - cap
            text = text[:cap] + _marker(cut)
            excess_chars -= cut - _MARKER_CHARS
            cut_count += 1
        parts.setdefault(index, []).append(text)
    for index, texts in parts.items():
        messages[index]["content"] = "".join(texts)
    notes.append(f"{cut_count} long section(s) cut to {cap} characters")
    return excess_chars


def _common_cap(lengths: list[int], excess_chars: int) -> int | None:
    """The largest cap (at least MIN_SECTION_CHARS) whose cuts save `excess_chars`, markers
    included; None when even the smallest cap is not enough."""
    def saved(cap: int) -> int:
        return sum(length - cap - _MARKER_CHARS for length in lengths if length > cap + _MARKER_CHARS)

    if not lengths or saved(MIN_SECTION_CHARS) < excess_chars:
        return None
    low, high = MIN_SECTION_CHARS, max(lengths)
    while low < high:
        middle = (low + high + 1) // 2
        if saved(middle) >= excess_chars:
            low = middle
        else:
            high = middle - 1
    return low
