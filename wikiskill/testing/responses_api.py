"""The OpenAI Responses API (`POST /v1/responses`) on top of the fake server's chat handler.

Codex speaks only this API. A request's `instructions` and `input` items are turned into the
chat-completions body the handler already reads (developer/system messages as `system`,
`function_call` items as an assistant's `tool_calls`, `function_call_output` items as `tool`
messages, function tools as tools); the handler's completion comes back as a `response` object,
streamed as `response.created`, per output item `response.output_item.added`, its text or
argument deltas and `.done` events, `response.output_item.done`, then `response.completed` with
the usage.
"""

from __future__ import annotations

import json
import time
from typing import Any

from wikiskill.testing import wire
from wikiskill.testing.wire import JsonObject

PATHS = ("/v1/responses", "/responses")
_ROLES = {"developer": "system", "system": "system", "assistant": "assistant"}


def matches(path: str) -> bool:
    return path in PATHS


def _text(content: Any) -> str:
    """The text of a message's content or a tool's output: a string, or a list of text parts."""
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def _call(item: JsonObject) -> JsonObject:
    arguments = item.get("arguments", item.get("input", ""))
    return {
        "id": item.get("call_id", ""),
        "type": "function",
        "function": {
            "name": item.get("name", ""),
            "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
        },
    }


def to_chat(body: JsonObject, path: str) -> JsonObject:
    """The chat-completions request the handler sees for the Responses API request `body`."""
    messages: list[JsonObject] = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": body["instructions"]})
    items = body.get("input") or []
    inputs: list[JsonObject] = [{"role": "user", "content": items}] if isinstance(items, str) else items
    for item in inputs:
        kind = item.get("type", "message")
        if kind == "message":
            messages.append(
                {"role": _ROLES.get(item.get("role", "user"), "user"), "content": _text(item.get("content"))}
            )
        elif kind in ("function_call", "custom_tool_call"):
            last = messages[-1] if messages else None
            if last is None or last["role"] != "assistant":
                last = {"role": "assistant", "content": None}
                messages.append(last)
            last.setdefault("tool_calls", []).append(_call(item))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            messages.append(
                {"role": "tool", "tool_call_id": item.get("call_id", ""), "content": _text(item.get("output"))}
            )
    tools = [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "parameters": tool.get("parameters") or {},
            },
        }
        for tool in body.get("tools") or []
        if tool.get("type") == "function"
    ]
    chat: dict[str, Any] = {
        "model": body.get("model"),
        "messages": messages,
        "max_tokens": body.get("max_output_tokens"),
        "stream": False,
    }
    if tools:
        chat["tools"] = tools
    return chat


def _items(completion: JsonObject) -> list[JsonObject]:
    """The output items of the chat `completion`: its text as a message, then one per call."""
    message = completion["choices"][0]["message"]
    number = completion["id"].removeprefix("chatcmpl-")
    items: list[JsonObject] = []
    if message.get("content"):
        items.append(
            {
                "id": f"msg_{number}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": message["content"], "annotations": []}],
            }
        )
    for index, call in enumerate(message.get("tool_calls") or []):
        items.append(
            {
                "id": f"fc_{number}_{index}",
                "type": "function_call",
                "status": "completed",
                "call_id": call["id"],
                "name": call["function"]["name"],
                "arguments": call["function"]["arguments"],
            }
        )
    return items


def response(completion: JsonObject) -> JsonObject:
    """The finished `response` object carrying the chat `completion`."""
    usage = completion["usage"]
    return {
        "id": "resp_" + completion["id"].removeprefix("chatcmpl-"),
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": completion["model"],
        "output": _items(completion),
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage["completion_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage["total_tokens"],
        },
    }


def _item_events(index: int, item: JsonObject) -> list[tuple[str, JsonObject]]:
    where = {"item_id": item["id"], "output_index": index}
    if item["type"] == "message":
        text = item["content"][0]["text"]
        empty = {"type": "output_text", "text": "", "annotations": []}
        return [
            (
                "response.output_item.added",
                {"output_index": index, "item": {**item, "status": "in_progress", "content": []}},
            ),
            ("response.content_part.added", {**where, "content_index": 0, "part": empty}),
            *[
                ("response.output_text.delta", {**where, "content_index": 0, "delta": piece})
                for piece in wire.pieces(text)
            ],
            ("response.output_text.done", {**where, "content_index": 0, "text": text}),
            ("response.content_part.done", {**where, "content_index": 0, "part": item["content"][0]}),
            ("response.output_item.done", {"output_index": index, "item": item}),
        ]
    return [
        (
            "response.output_item.added",
            {"output_index": index, "item": {**item, "status": "in_progress", "arguments": ""}},
        ),
        *[
            ("response.function_call_arguments.delta", {**where, "delta": piece})
            for piece in wire.pieces(item["arguments"])
        ],
        ("response.function_call_arguments.done", {**where, "arguments": item["arguments"]}),
        ("response.output_item.done", {"output_index": index, "item": item}),
    ]


def events(completion: JsonObject) -> list[tuple[str, JsonObject]]:
    """The Responses API stream events, `(name, data)`, numbered in order."""
    done = response(completion)
    out = [("response.created", {"response": {**done, "status": "in_progress", "output": [], "usage": None}})]
    for index, item in enumerate(done["output"]):
        out += _item_events(index, item)
    out.append(("response.completed", {"response": done}))
    return [(name, {"type": name, "sequence_number": number, **data}) for number, (name, data) in enumerate(out)]


def render(completion: JsonObject, body: JsonObject, path: str) -> tuple[str, bytes]:
    """The HTTP body answering `body`: an event stream when it asked for one, else JSON."""
    if body.get("stream"):
        return "text/event-stream", wire.named_events(events(completion))
    return "application/json", json.dumps(response(completion)).encode()


def error(status: int, message_text: str, kind: str) -> JsonObject:
    """OpenAI's error body."""
    return {"error": {"message": message_text, "type": kind, "param": None, "code": kind}}
