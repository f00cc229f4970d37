"""Real agent sessions as trajectories: one parser class per transcript format.

Every parser turns a file's text into chat messages in one shape (OpenAI's: `role`, `content`
text, assistant `tool_calls`, `tool` results with their `tool_call_id`), so an ingested session
renders for the maintainer and proposer like any trace. A file that does not fit its format is
refused with its name and line, before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from ..contracts.integrations import SESSION_FORMATS, SessionParser
from ..core.errors import TranscriptError
from ..core.parts import SESSION_FORMAT
from ..core.redact import Scrubber
from ..llm.chat import Message
from ..store.traces import SESSION, Outcome, Provenance, Trajectory, TrajectorySplit, cut

INGESTED_SPLIT = TrajectorySplit.INGESTED.value
ID_STEM_CHARS = 24
QUESTION_CHARS = 500
"""The first user message stands as the task; the whole of it is in the messages."""


def _call(call_id: str, name: str, arguments: object) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


@SESSION_FORMAT.builtin
class ClaudeCodeParser:
    """Claude Code's session files (`~/.claude/projects/<project>/<session id>.jsonl`): one JSON
    object per line; `user` and `assistant` lines hold an Anthropic message whose content is a
    string or a list of text, thinking, tool_use and tool_result blocks. Other line types
    (summary, system, file-history-snapshot, ...), meta lines and subagent (sidechain) lines are
    not the agent's own turns and are left out; an assistant reply streamed over several lines
    with one message id becomes one message."""

    def messages(self, text: str, name: str) -> list[Message]:
        messages: list[Message] = []
        last_id = None
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as exc:
                raise TranscriptError(f"{name}:{number}: not a JSON line ({exc.msg})") from None
            if not isinstance(entry, dict):
                raise TranscriptError(f"{name}:{number}: a line must be a JSON object")
            kind = entry.get("type")
            if kind not in ("user", "assistant") or entry.get("isMeta") or entry.get("isSidechain"):
                continue
            message = entry.get("message")
            if not isinstance(message, dict) or not isinstance(message.get("content"), (str, list)):
                raise TranscriptError(f"{name}:{number}: a {kind} line needs a message with content")
            if kind == "user":
                messages += self._user(message["content"], name, number)
                last_id = None
                continue
            reply = self._assistant(message["content"], name, number)
            if last_id is not None and message.get("id") == last_id:
                _extend(messages[-1], reply)
            else:
                messages.append(reply)
            last_id = message.get("id")
        return messages

    @staticmethod
    def _user(content: str | list[object], name: str, number: int) -> list[Message]:
        if isinstance(content, str):
            return [{"role": "user", "content": content}]
        out, texts = [], []
        for block in _blocks(content, name, number):
            if block.get("type") == "tool_result":
                result = _text(block.get("content"), name, number)
                if block.get("is_error"):
                    result = f"(error) {result}"
                out.append({"role": "tool", "tool_call_id": str(block.get("tool_use_id", "")), "content": result})
            elif block.get("type") == "text":
                texts.append(str(block.get("text", "")))
        return out + ([{"role": "user", "content": "\n".join(texts)}] if texts else [])

    @staticmethod
    def _assistant(content: str | list[object], name: str, number: int) -> Message:
        if isinstance(content, str):
            return {"role": "assistant", "content": content}
        texts, calls = [], []
        for block in _blocks(content, name, number):
            kind = block.get("type")
            if kind == "text":
                texts.append(str(block.get("text", "")))
            elif kind == "thinking":
                texts.append(f"(thinking) {block.get('thinking', '')}")
            elif kind == "tool_use":
                if not isinstance(block.get("name"), str):
                    raise TranscriptError(f"{name}:{number}: a tool_use block has no tool name")
                calls.append(_call(str(block.get("id", "")), block["name"], block.get("input", {})))
        reply: Message = {"role": "assistant", "content": "\n".join(texts)}
        if calls:
            reply["tool_calls"] = calls
        return reply


@SESSION_FORMAT.builtin
class OpenAIMessagesParser:
    """A JSON file holding a list of chat messages, or an object with them under `messages`:
    roles system, user, assistant (with optional `tool_calls`) and tool."""

    ROLES = ("system", "developer", "user", "assistant", "tool")

    def messages(self, text: str, name: str) -> list[Message]:
        data = json_document(text, name)
        if isinstance(data, dict):
            data = data.get("messages")
        if not isinstance(data, list):
            raise TranscriptError(f"{name}:1: expected a list of messages or an object with `messages`")
        return [self._message(item, f"{name}: message {index}") for index, item in enumerate(data, 1)]

    def _message(self, item: object, where: str) -> Message:
        if not isinstance(item, dict) or item.get("role") not in self.ROLES:
            raise TranscriptError(f"{where}: needs a role of {', '.join(self.ROLES)}")
        role = "system" if item["role"] == "developer" else item["role"]
        message: Message = {"role": role, "content": _text(item.get("content"), where, None)}
        calls = item.get("tool_calls") or []
        if role == "assistant" and calls:
            if not isinstance(calls, list):
                raise TranscriptError(f"{where}: tool_calls must be a list")
            message["tool_calls"] = [self._tool_call(call, where) for call in calls]
        if role == "tool":
            message["tool_call_id"] = str(item.get("tool_call_id", ""))
        return message

    @staticmethod
    def _tool_call(call: object, where: str) -> dict[str, Any]:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict) or not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise TranscriptError(f"{where}: a tool call needs function.name")
        return _call(str(call.get("id", "")), function["name"], function.get("arguments", ""))


def json_document(text: str, name: str) -> Any:
    """The JSON document in `text`; TranscriptError naming `name` and the line where it breaks."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TranscriptError(f"{name}:{exc.lineno}: not valid JSON ({exc.msg})") from None


def session_parser(name: str) -> SessionParser:
    """The parser of the format `--format` names; a one-line error listing the formats when it names none."""
    return SESSION_FORMATS.create(name)


def _blocks(content: list[object], name: str, number: int) -> list[dict[str, Any]]:
    blocks = [block for block in content if isinstance(block, dict)]
    if len(blocks) != len(content):
        raise TranscriptError(f"{name}:{number}: content blocks must be JSON objects")
    return blocks


def _text(content: object, name: str, number: int | None) -> str:
    """Plain text of a message's or tool result's content: a string, or a list of parts whose
    text parts are joined (an image part stands as `[image]`)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    where = name if number is None else f"{name}:{number}"
    if not isinstance(content, list):
        raise TranscriptError(f"{where}: content must be text or a list of parts")
    parts = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text"):
            parts.append(str(part.get("text", "")))
        elif isinstance(part, dict) and part.get("type") == "refusal":
            parts.append(f"(refusal) {part.get('refusal', '')}")
        elif isinstance(part, dict) and "image" in str(part.get("type", "")):
            parts.append("[image]")
        else:
            raise TranscriptError(f"{where}: a content part must be text, a refusal or an image")
    return "\n".join(parts)


def _extend(message: Message, more: Message) -> None:
    message["content"] = "\n".join(filter(None, [message["content"], more["content"]]))
    if more.get("tool_calls"):
        message["tool_calls"] = message.get("tool_calls", []) + more["tool_calls"]


def session_id(name: str, text: str) -> str:
    """A task id for the session: its name (a file's stem, a task's name) made safe, and a digest
    of its text, so the same session ingested twice has the same id and two of one name differ."""
    stem = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:ID_STEM_CHARS].strip("-") or "session"
    return f"{stem}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:6]}"


def read_session(path: Path, parser: SessionParser, outcome: Outcome, scrub: Scrubber) -> Trajectory:
    """One transcript file as a trajectory, secrets scrubbed from its text before it is parsed."""
    try:
        text = scrub(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise TranscriptError(f"{path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
    messages = parser.messages(text, str(path))
    users = [m["content"] for m in messages if m["role"] == "user" and m["content"].strip()]
    replies = [m["content"] for m in messages if m["role"] == "assistant" and m["content"].strip()]
    if not users or not any(m["role"] == "assistant" for m in messages):
        raise TranscriptError(f"{path}: no user and assistant messages: is it a {parser.format} transcript?")
    return Trajectory(
        task_id=session_id(path.stem, text),
        split=INGESTED_SPLIT,
        kind=SESSION,
        question=cut(users[0], QUESTION_CHARS),
        messages=messages,
        prediction=replies[-1] if replies else None,
        score=outcome.score,
        provenance=Provenance(format=parser.format, file=path.name, outcome=outcome),
    )
