"""The optional on-disk response cache (`llm.cache`): replies to identical requests, replayed."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path

from ..core.redact import scrub
from ..store.traces import Usage
from .chat import Reply, ToolCall


class ResponseCache:
    """Replies keyed by model, messages, tools and sampling parameters, in one sqlite file."""

    def __init__(self, path: Path):
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)")
        self._lock = threading.Lock()

    @staticmethod
    def key(request: Mapping[str, object]) -> str:
        return hashlib.sha256(json.dumps(request, sort_keys=True, default=str).encode()).hexdigest()

    def get(self, key: str) -> Reply | None:
        with self._lock:
            row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        return Reply(
            content=data["content"],
            tool_calls=[ToolCall(**call) for call in data["tool_calls"]],
            notes=["from the response cache"],
            usage=Usage(prompt_tokens=data["prompt_tokens"], completion_tokens=data["completion_tokens"]),
        )

    def put(self, key: str, reply: Reply) -> None:
        data = {
            "content": reply.content,
            "tool_calls": [call.__dict__ for call in reply.tool_calls],
            "prompt_tokens": reply.usage.prompt_tokens,
            "completion_tokens": reply.usage.completion_tokens,
        }
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?)", (key, scrub(json.dumps(data))))
