"""A finished chat completion re-encoded as OpenAI's stream of `chat.completion.chunk` events.

The fake server builds one completion per request; a request with ``"stream": true`` gets that
same completion cut into the pieces a real OpenAI-compatible server sends, so that clients which
only stream (Qwen Code, the openai SDK with ``stream=True``) reassemble exactly the non-streamed
reply: a role chunk, the content in small pieces, each tool call as a head (index, id, type,
function name) followed by its arguments in pieces, a chunk carrying `finish_reason`, a usage
chunk (no choices) when ``stream_options.include_usage`` is set, and ``data: [DONE]``.
"""

from __future__ import annotations

import json
from typing import Any

from wikiskill.testing.wire import JsonObject

PIECE = 8  # characters of content or arguments per chunk: small enough that every reply splits


def _pieces(text: str) -> list[str]:
    return [text[i : i + PIECE] for i in range(0, len(text), PIECE)]


def _deltas(message: JsonObject) -> list[JsonObject]:
    """The deltas whose concatenation is `message`."""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": piece} for piece in _pieces(message.get("content") or "")]
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        deltas.append(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call["id"],
                        "type": call["type"],
                        "function": {"name": function["name"], "arguments": ""},
                    }
                ]
            }
        )
        deltas += [
            {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
            for piece in _pieces(function["arguments"])
        ]
    return deltas


def chunks(completion: JsonObject, include_usage: bool) -> list[JsonObject]:
    """The `chat.completion.chunk` objects of `completion` (a `chat.completion` with one choice),
    all sharing its id, created time and model."""
    head = {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": completion["created"],
        "model": completion["model"],
    }
    choice = completion["choices"][0]

    def chunk(delta: JsonObject, finish: str | None = None) -> JsonObject:
        return {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    out = [chunk(delta) for delta in _deltas(choice["message"])]
    out.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        out.append({**head, "choices": [], "usage": completion["usage"]})
    return out


def encode(events: list[JsonObject]) -> bytes:
    """Server-Sent Events: one ``data: JSON`` event per chunk, then ``data: [DONE]``."""
    lines = [f"data: {json.dumps(event)}\n\n" for event in events] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()
