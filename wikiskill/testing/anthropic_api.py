"""The Anthropic Messages API (`POST /v1/messages`) on top of the fake server's chat handler.

Claude Code speaks only this API. A request is turned into the chat-completions body the
server's handler already reads (system blocks as a `system` message, `tool_use` blocks as
`tool_calls`, `tool_result` blocks as `tool` messages, tools as functions), so one scripted
handler drives Claude Code as it drives an OpenAI client; the handler's completion comes back as
the Messages API's stream of named events: `message_start`, per content block
`content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta`) /
`content_block_stop`, then `message_delta` (stop reason, output tokens) and `message_stop`.
"""

from __future__ import annotations

import json
from typing import Any

from wikiskill.testing import wire
from wikiskill.testing.wire import JsonObject

PATHS = ("/v1/messages", "/messages")


def matches(path: str) -> bool:
    return path in PATHS


def _text(content: Any) -> str:
    """The text of a content field: a string, or a list of blocks whose text blocks count."""
    if isinstance(content, str):
        return content
    return "\n".join(
        block.get("text", "") for block in content or [] if isinstance(block, dict) and block.get("type") == "text"
    )


def _user_messages(content: Any) -> list[JsonObject]:
    """A user turn: its tool results as `tool` messages first, then its text, if any."""
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    out = [
        {"role": "tool", "tool_call_id": block.get("tool_use_id", ""), "content": _text(block.get("content"))}
        for block in content or []
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    text = _text(content)
    if text:
        out.append({"role": "user", "content": text})
    return out


def _assistant_message(content: Any) -> JsonObject:
    message: dict[str, Any] = {"role": "assistant", "content": _text(content) or None}
    blocks = content if isinstance(content, list) else []
    calls = [
        {
            "id": block.get("id", ""),
            "type": "function",
            "function": {"name": block.get("name", ""), "arguments": json.dumps(block.get("input") or {})},
        }
        for block in blocks
        if isinstance(block, dict) and block.get("type") == "tool_use"
    ]
    if calls:
        message["tool_calls"] = calls
    return message


def to_chat(body: JsonObject, path: str) -> JsonObject:
    """The chat-completions request the handler sees for the Messages API request `body`."""
    messages: list[JsonObject] = []
    system = _text(body.get("system"))
    if system:
        messages.append({"role": "system", "content": system})
    for message in body.get("messages") or []:
        role, content = message.get("role"), message.get("content")
        if role == "assistant":
            messages.append(_assistant_message(content))
        elif role == "system":
            messages.append({"role": "system", "content": _text(content)})
        else:
            messages.extend(_user_messages(content))
    tools = [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "parameters": tool["input_schema"],
            },
        }
        for tool in body.get("tools") or []
        if isinstance(tool, dict) and "input_schema" in tool
    ]
    chat: dict[str, Any] = {
        "model": body.get("model"),
        "messages": messages,
        "max_tokens": body.get("max_tokens"),
        "stream": False,
    }
    if tools:
        chat["tools"] = tools
    return chat


def _blocks(message: JsonObject) -> list[JsonObject]:
    """The content blocks of the chat `message`: its text, then one `tool_use` per call."""
    blocks = [{"type": "text", "text": message["content"]}] if message.get("content") else []
    for call in message.get("tool_calls") or []:
        function = call["function"]
        blocks.append(
            {
                "type": "tool_use",
                "id": call["id"],
                "name": function["name"],
                "input": wire.arguments(function["arguments"]),
            }
        )
    return blocks


def _head(completion: JsonObject) -> JsonObject:
    message = completion["choices"][0]["message"]
    return {
        "id": "msg_" + completion["id"].removeprefix("chatcmpl-"),
        "type": "message",
        "role": "assistant",
        "model": completion["model"],
        "content": [],
        "stop_reason": "tool_use" if message.get("tool_calls") else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": completion["usage"]["prompt_tokens"],
            "output_tokens": completion["usage"]["completion_tokens"],
        },
    }


def events(completion: JsonObject) -> list[tuple[str, JsonObject]]:
    """The Messages API stream events, `(name, data)`, carrying the chat `completion`."""
    head = _head(completion)
    start = {**head, "stop_reason": None, "usage": {**head["usage"], "output_tokens": 1}}
    out: list[tuple[str, JsonObject]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(_blocks(completion["choices"][0]["message"])):
        empty: JsonObject
        if block["type"] == "text":
            empty = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in wire.pieces(block["text"])]
        else:
            empty = {**block, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": piece} for piece in wire.pieces(json.dumps(block["input"]))
            ]
        out.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": empty}))
        out += [
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}) for delta in deltas
        ]
        out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": head["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": head["usage"]["output_tokens"]},
            },
        )
    )
    out.append(("message_stop", {"type": "message_stop"}))
    return out


def message(completion: JsonObject) -> JsonObject:
    """The whole Messages API response (for a request without `stream`)."""
    return {**_head(completion), "content": _blocks(completion["choices"][0]["message"])}


def render(completion: JsonObject, body: JsonObject, path: str) -> tuple[str, bytes]:
    """The HTTP body answering `body`: an event stream when it asked for one, else JSON."""
    if body.get("stream"):
        return "text/event-stream", wire.named_events(events(completion))
    return "application/json", json.dumps(message(completion)).encode()


def error(status: int, message_text: str, kind: str) -> JsonObject:
    """The Messages API's error body."""
    kinds = {429: "rate_limit_error", 529: "overloaded_error"}
    return {"type": "error", "error": {"type": kinds.get(status, kind), "message": message_text}}
