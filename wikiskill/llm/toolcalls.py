"""The text tool-call protocol, for models that do not return native tool calls.

The tools and their JSON schemas are described in the system prompt; a call is a JSON object
`{"name": ..., "arguments": {...}}` in the reply (bare, in ```json fences, or in a
`<tool_call>` block); a result goes back as a user message. Tool schemas come from pydantic
models, so what a prompt shows and what the code accepts cannot drift.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..core.prompts import render
from .chat import Message, ToolSpec
from .jsontext import json_objects

TEXT_CALL_PREFIX = "text-"
"""Ids of calls parsed from a reply's text start with this, so the conversation can be sent
back in the form the model wrote it."""
MAX_TEXT_CALLS = 8


@dataclass(frozen=True)
class TextCall:
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema with every `$ref` inlined and titles dropped (smaller prompts, and
    servers that turn schemas into grammars need no `$defs`); a discriminated union is the plain
    `anyOf` of its members, whose `discriminator` mapping would point into the dropped `$defs`."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def inline(node: object) -> object:
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(definitions[node["$ref"].rsplit("/", 1)[-1]])
            if "discriminator" in node and "oneOf" in node:
                node = {
                    ("anyOf" if key == "oneOf" else key): value for key, value in node.items() if key != "discriminator"
                }
            return {key: inline(value) for key, value in node.items() if key != "title"}
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    return inline(schema)  # type: ignore[return-value]


def tool_spec(name: str, description: str, arguments: type[BaseModel]) -> ToolSpec:
    """An OpenAI-style function tool whose parameters are the schema of `arguments`."""
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": json_schema(arguments)},
    }


def call_schema(tools: list[ToolSpec]) -> dict[str, Any]:
    """The JSON schema of one text call to any of `tools`: what a server that turns schemas into
    grammars (llama.cpp, vLLM, Ollama) can hold a reply to, so even a weak model writes a call."""
    return {
        "anyOf": [
            {
                "type": "object",
                "properties": {
                    "name": {"const": tool["function"]["name"]},
                    "arguments": tool["function"].get("parameters", {}),
                },
                "required": ["name", "arguments"],
            }
            for tool in tools
        ]
    }


def describe_tools(tools: list[ToolSpec]) -> str:
    """The prompt section that teaches the text protocol (prompts/tools_text.j2)."""
    shown = [
        {
            "name": tool["function"]["name"],
            "description": tool["function"].get("description", ""),
            "schema": json.dumps(tool["function"].get("parameters", {})),
        }
        for tool in tools
    ]
    return render("tools_text", tools=shown)


def parse_text_calls(content: str | None, tool_names: set[str]) -> list[TextCall]:
    """The calls written in a reply: JSON objects naming a known tool, or shaped like a call."""
    if not content:
        return []
    try:
        objects = list(itertools.islice(json_objects(content), MAX_TEXT_CALLS))
    except ValueError:
        return []
    calls = []
    for value in objects:
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            continue
        if value["name"] not in tool_names and "arguments" not in value and "parameters" not in value:
            continue
        arguments = value.get("arguments", value.get("parameters", {}))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments, strict=False)
            except (ValueError, RecursionError):
                pass
        calls.append(TextCall(value["name"], arguments if isinstance(arguments, dict) else None, json.dumps(arguments)))
    return calls


def as_text_conversation(messages: list[Message], tools: list[ToolSpec]) -> list[Message]:
    """The conversation as a model without native tool calls sees it: the tools described in the
    system prompt, calls as the text the model wrote, results as user messages."""
    names: dict[str, str] = {}
    shown: list[Message] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            calls = message["tool_calls"]
            names.update({call["id"]: call["function"]["name"] for call in calls})
            text = message.get("content") or "\n".join(
                json.dumps({"name": call["function"]["name"], "arguments": call["function"]["arguments"]})
                for call in calls
            )
            shown.append({"role": "assistant", "content": text})
            continue
        if role == "tool":
            message = {
                "role": "user",
                "content": f"Result of {names.get(message.get('tool_call_id', ''), 'the call')}:\n"
                f"{message.get('content') or ''}",
            }
        if message.get("role") == "user" and shown and shown[-1]["role"] == "user":
            shown[-1] = {"role": "user", "content": f"{shown[-1]['content']}\n\n{message.get('content') or ''}"}
        else:
            shown.append(message)
    description = describe_tools(tools)
    if shown and shown[0].get("role") == "system":
        shown[0] = {**shown[0], "content": f"{shown[0].get('content') or ''}\n\n{description}"}
    else:
        shown.insert(0, {"role": "system", "content": description})
    return shown
