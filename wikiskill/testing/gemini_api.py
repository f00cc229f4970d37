"""The Gemini API (`POST /v1beta/models/MODEL:generateContent` and `:streamGenerateContent`) on
top of the fake server's chat handler.

Gemini CLI speaks only this API. A request's `systemInstruction` and `contents` are turned into
the chat-completions body the handler already reads (`functionCall` parts as an assistant's
`tool_calls`, `functionResponse` parts as `tool` messages, function declarations as tools). The
Gemini API gives calls no ids unless the client sent them, so calls get ids in order and each
response takes the oldest open call of its name. The handler's completion comes back as
`GenerateContentResponse` chunks (`?alt=sse`: one `data:` event each): the text in pieces, then
the calls, the last chunk with `finishReason` and `usageMetadata`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from wikiskill.testing import wire
from wikiskill.testing.wire import JsonObject

_PATH = re.compile(r"^/v1(?:beta|alpha)?/models/[^/:]+:(?:stream)?generateContent$", re.IGNORECASE)
_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def matches(path: str) -> bool:
    return bool(_PATH.match(path))


def _model(path: str) -> str:
    return path.rsplit("/", 1)[-1].split(":", 1)[0]


def _system(instruction: Any) -> str:
    if isinstance(instruction, str):
        return instruction
    parts = (instruction or {}).get("parts") or []
    return "\n".join(part.get("text", "") for part in parts if isinstance(part, dict))


class _Calls:
    """The ids of a conversation's calls: the client's, else `call_<n>` in order; a response
    without an id answers the oldest open call of its name."""

    def __init__(self) -> None:
        self.count = 0
        self.open: list[tuple[str, str]] = []

    def call(self, call: JsonObject) -> JsonObject:
        self.count += 1
        call_id = call.get("id") or f"call_{self.count}"
        self.open.append((call.get("name", ""), call_id))
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": call.get("name", ""), "arguments": json.dumps(call.get("args") or {})},
        }

    def answer(self, response: JsonObject) -> JsonObject:
        name = response.get("name", "")
        call_id = response.get("id") or next((i for n, i in self.open if n == name), name)
        self.open = [(n, i) for n, i in self.open if i != call_id]
        output = response.get("response")
        content = output.get("output", json.dumps(output)) if isinstance(output, dict) else json.dumps(output)
        return {"role": "tool", "tool_call_id": call_id, "content": content}


def _messages(contents: list[JsonObject]) -> list[JsonObject]:
    messages: list[JsonObject] = []
    calls = _Calls()
    for content in contents:
        parts = [part for part in content.get("parts") or [] if isinstance(part, dict)]
        text = "".join(part.get("text", "") for part in parts if not part.get("thought"))
        if content.get("role") == "model":
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            tool_calls = [calls.call(part["functionCall"]) for part in parts if "functionCall" in part]
            if tool_calls:
                message["tool_calls"] = tool_calls
            messages.append(message)
            continue
        messages += [calls.answer(part["functionResponse"]) for part in parts if "functionResponse" in part]
        if text:
            messages.append({"role": "user", "content": text})
    return messages


def to_chat(body: JsonObject, path: str) -> JsonObject:
    """The chat-completions request the handler sees for the Gemini API request `body` to `path`."""
    system = _system(body.get("systemInstruction"))
    messages = [{"role": "system", "content": system}] if system else []
    messages += _messages(body.get("contents") or [])
    tools = [
        {
            "type": "function",
            "function": {
                "name": declaration["name"],
                "description": declaration.get("description", ""),
                "parameters": declaration.get("parameters") or declaration.get("parametersJsonSchema") or {},
            },
        }
        for tool in body.get("tools") or []
        for declaration in tool.get("functionDeclarations") or []
    ]
    chat: dict[str, Any] = {
        "model": _model(path),
        "messages": messages,
        "stream": False,
        "max_tokens": (body.get("generationConfig") or {}).get("maxOutputTokens"),
    }
    if tools:
        chat["tools"] = tools
    return chat


def chunks(completion: JsonObject) -> list[JsonObject]:
    """The `GenerateContentResponse` chunks carrying the chat `completion`."""
    message = completion["choices"][0]["message"]
    parts: list[list[JsonObject]] = [[{"text": piece}] for piece in wire.pieces(message.get("content") or "") if piece]
    calls = [
        {"functionCall": {"name": call["function"]["name"], "args": wire.arguments(call["function"]["arguments"])}}
        for call in message.get("tool_calls") or []
    ]
    if calls or not parts:
        parts.append(calls)
    usage = completion["usage"]
    head = {"modelVersion": completion["model"], "responseId": completion["id"].removeprefix("chatcmpl-")}
    out = [{"candidates": [{"content": {"role": "model", "parts": part}, "index": 0}], **head} for part in parts]
    out[-1]["candidates"][0]["finishReason"] = "STOP"
    out[-1]["usageMetadata"] = {
        "promptTokenCount": usage["prompt_tokens"],
        "candidatesTokenCount": usage["completion_tokens"],
        "totalTokenCount": usage["total_tokens"],
    }
    return out


def render(completion: JsonObject, body: JsonObject, path: str) -> tuple[str, bytes]:
    """The HTTP body: SSE chunks for `:streamGenerateContent`, else one JSON response."""
    pieces = chunks(completion)
    if ":stream" in path.lower():
        return "text/event-stream", "".join(f"data: {json.dumps(chunk)}\r\n\r\n" for chunk in pieces).encode()
    message = completion["choices"][0]["message"]
    whole = pieces[-1]
    whole["candidates"][0]["content"]["parts"] = ([{"text": message["content"]}] if message.get("content") else []) + [
        part for chunk in pieces for part in chunk["candidates"][0]["content"]["parts"] if "functionCall" in part
    ]
    return "application/json", json.dumps(whole).encode()


def error(status: int, message_text: str, kind: str) -> JsonObject:
    """Google's error body."""
    return {"error": {"code": status, "message": message_text, "status": _STATUS.get(status, "UNKNOWN")}}
