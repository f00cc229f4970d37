"""The skill proposer: a native tool-calling loop that reads the wiki and traces, then proposes
one skill change. It reads through a sandboxed `Library` and returns the raw proposal; the
harness validates and applies it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Protocol

from ..llm import ChatModel
from ..prompts import render
from ..traces import Usage


class Library(Protocol):
    """Read access for roles: the workspace's train material only."""

    def read(self, path: str) -> tuple[str, bool]:
        """The file's text and whether it is a trace; raises LookupError with a reason."""
        ...

    def list(self, path: str) -> list[str]: ...


def _tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TOOLS = [
    _tool("read_file", "Read a workspace file: wiki/..., skills/..., or traces/<task_id> for a train trace.",
          {"path": {"type": "string"}}, ["path"]),
    _tool("list_files", "List the files under a workspace folder (wiki, wiki/patterns, skills, traces).",
          {"path": {"type": "string"}}, ["path"]),
    _tool("finish", "Submit your one proposal (create, patch, retire or no_action).",
          {"proposal": {"type": "object", "description": "The proposal object described in the instructions."}},
          ["proposal"]),
]


@dataclass
class ProposerResult:
    proposal: dict | None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    reads: list[str] = field(default_factory=list)
    turns: int = 0


class Proposer:
    def __init__(self, model: ChatModel, library: Library, max_turns: int, min_trace_reads: int):
        self.model = model
        self.library = library
        self.max_turns = max_turns
        self.min_trace_reads = min_trace_reads

    def run(self, context: dict) -> ProposerResult:
        """`context` fills prompts/proposer_user.j2 (round, scores, index, impact, skills, outcomes)."""
        messages = [
            {"role": "system", "content": render(
                "proposer_system", min_trace_reads=self.min_trace_reads, max_turns=self.max_turns)},
            {"role": "user", "content": render("proposer_user", **context)},
        ]
        result = ProposerResult(proposal=None)
        traces_read: set[str] = set()
        for turn in range(1, self.max_turns + 1):
            result.turns = turn
            reply = self.model.complete(messages, TOOLS)
            result.usage = result.usage + reply.usage
            messages.append(reply.message())
            if not reply.tool_calls:
                messages.append({"role": "user", "content": "Use the tools: read what you need, then call `finish`."})
                continue
            for call in reply.tool_calls:
                answer, proposal = self._handle(call.name, call.arguments, traces_read, result)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": answer})
                if proposal is not None:
                    result.proposal = proposal
                    return result
        result.error = f"the proposer did not call finish within {self.max_turns} turns"
        return result

    def _handle(self, name: str, arguments: dict | None, traces_read: set[str],
                result: ProposerResult) -> tuple[str, dict | None]:
        if not isinstance(arguments, dict):
            return "Error: the arguments were not a JSON object.", None
        if name in ("read_file", "list_files"):
            path = arguments.get("path")
            if not isinstance(path, str):
                return "Error: `path` must be a string.", None
            try:
                if name == "list_files":
                    return "\n".join(self.library.list(path)) or "(empty)", None
                text, is_trace = self.library.read(path)
            except LookupError as exc:
                return f"Error: {exc.args[0] if exc.args else exc}", None
            result.reads.append(path)
            if is_trace:
                traces_read.add(text)  # by content: traces/x and raw/r001/train/x.json are one trace
            return text, None
        if name == "finish":
            if len(traces_read) < self.min_trace_reads:
                return (f"Error: read at least {self.min_trace_reads} traces with read_file('traces/<task_id>') "
                        f"before finishing (you have read {len(traces_read)})."), None
            proposal = _object(arguments.get("proposal", arguments))
            if not isinstance(proposal, dict):
                return "Error: `proposal` must be a JSON object.", None
            return "Proposal received.", proposal
        return f"Error: unknown tool {name!r}; use read_file, list_files or finish.", None


def _object(value: object) -> object:
    """A proposal some models send as a JSON string instead of an object, decoded."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return value
