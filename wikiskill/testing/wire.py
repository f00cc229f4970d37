"""What the fake server's other API dialects (`anthropic_api`, `responses_api`, `gemini_api`) share:
cutting text into stream pieces, a scripted call's arguments as an object, SSE framing."""

from __future__ import annotations

import json
from typing import Any

JsonObject = dict[str, Any]
"""A JSON object as the fake server parses and sends it: request bodies, messages, completions, events."""

PIECE = 8  # characters of text or arguments per delta, so every reply arrives in pieces


def pieces(text: str) -> list[str]:
    return [text[i : i + PIECE] for i in range(0, len(text), PIECE)] or [""]


def arguments(text: str | None) -> JsonObject:
    """A tool call's arguments as the object these APIs carry (a handler may script any text)."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {"arguments": text}
    return value if isinstance(value, dict) else {"arguments": value}


def named_events(events: list[tuple[str, JsonObject]]) -> bytes:
    """Server-Sent Events with an `event:` name line each, as the Anthropic and Responses APIs send."""
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()
