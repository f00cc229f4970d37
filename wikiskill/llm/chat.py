"""What roles need from a model and get back: the `ChatModel` protocol, its `Reply` and the
`ToolCall`s in it. The task agent is built against these, so a reply's message is part of what
it is shown."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from ..store.traces import Usage

Message = dict[str, Any]
"""An OpenAI-style chat message, the shape litellm takes: `role`, `content` (text, or a list of
parts), and an assistant's `tool_calls` or a tool result's `tool_call_id`."""
ToolSpec = dict[str, Any]
"""An OpenAI-style function tool: `{"type": "function", "function": {name, description, parameters}}`."""


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""


@dataclass
class Reply:
    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    notes: list[str] = field(default_factory=list)
    """What the model layer did to get this reply (context fitted, a setting it fell back from)."""

    def message(self) -> Message:
        """The assistant message to append to the conversation."""
        message: Message = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw_arguments}}
                for c in self.tool_calls
            ]
        return message


class ChatModel(Protocol):
    """What roles need from a model. Tests may pass any object with these methods.

    `response_model`: the reply should be a JSON object of this pydantic model (its schema may be
    sent as `response_format`; the role still extracts and validates the JSON itself).
    `call_required`: every reply should call one of `tools` (the proposer's loop); under the text
    protocol the reply may then be held to a call's JSON schema with `response_format`.
    """

    def complete(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        response_model: type[BaseModel] | None = None,
        call_required: bool = False,
    ) -> Reply: ...

    async def acomplete(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        response_model: type[BaseModel] | None = None,
        call_required: bool = False,
    ) -> Reply: ...


@runtime_checkable
class Paced(Protocol):
    """A ChatModel that knows its server's measured speed: a role sizes its one prompt to it."""

    def prompt_budget(self) -> int | None:
        """The most prompt tokens one structured reply's request may hold to be answered in time;
        None while the speed is unknown."""
        ...
