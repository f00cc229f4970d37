"""The fake server's prompt cache: which prompt tokens of a request a provider would read from its
cache, given the requests it saw before (`FakeOpenAIServer(prompt_cache=...)`)."""

from __future__ import annotations

import hashlib
import json

from wikiskill.testing.wire import JsonObject

PROMPT_CACHE_MODES = ("prefix", "marked", "off")
"""`prefix`: any prefix an earlier request sent, as OpenAI's automatic cache; `marked`: only
prefixes ending at a message with `cache_control`, as Anthropic's; `off`: none reported."""


def rough_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def messages_text(messages: list[JsonObject]) -> str:
    parts: list[str] = []
    for message in messages or []:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
            parts.extend(p.get("text", "") for p in content if isinstance(p, dict))
    return "".join(parts)


def _plain(message: JsonObject) -> str:
    """A message as a prompt cache keys it: without its `cache_control` marks, text parts joined."""
    plain = {key: value for key, value in message.items() if key != "cache_control"}
    if isinstance(plain.get("content"), list):
        plain["content"] = messages_text([plain])
    return json.dumps(plain, sort_keys=True)


def _marked(message: JsonObject) -> bool:
    content = message.get("content")
    parts = content if isinstance(content, list) else []
    return "cache_control" in message or any(isinstance(p, dict) and "cache_control" in p for p in parts)


class PromptCache:
    """The prefixes of earlier requests a provider's prompt cache holds (see the module docstring)."""

    def __init__(self, mode: str = "prefix") -> None:
        if mode not in PROMPT_CACHE_MODES:
            raise ValueError(f"prompt_cache must be one of {', '.join(PROMPT_CACHE_MODES)}")
        self.mode = mode
        self._seen: set[str] = set()

    def read(self, body: JsonObject) -> int | None:
        """The prompt tokens of `body` read from the cache (None when off); its prefixes are kept."""
        if self.mode == "off":
            return None
        messages = body.get("messages") or []
        digest = hashlib.sha256(json.dumps(body.get("tools") or [], sort_keys=True).encode())
        hit = 0
        for length, message in enumerate(messages, 1):
            digest.update(_plain(message).encode())
            key = digest.hexdigest()
            if key in self._seen:
                hit = length
            if self.mode == "prefix" or _marked(message):
                self._seen.add(key)
        return rough_tokens(messages_text(messages[:hit])) if hit else 0
