"""Model calls: the only module that imports litellm (lazily: its import alone costs seconds).

It owns retries with backoff, token and cost accounting per role, budgets, an optional on-disk
response cache, native tool calls and JSON extraction from model text.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .config import BudgetSettings, LLMSettings, RoleSettings
from .errors import BudgetExceeded, ModelError
from .redact import Scrubber, scrub
from .traces import Usage

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
LOAD_SKILL_TOOL_NAME = "load_skill"


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict | None
    raw_arguments: str = ""


@dataclass
class Reply:
    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    def message(self) -> dict:
        """The assistant message to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw_arguments}}
                for c in self.tool_calls
            ]
        return message


class ChatModel(Protocol):
    """What roles need from a model. Tests may pass any object with these methods."""

    def complete(self, messages: list[dict], tools: list[dict] | None = None) -> Reply: ...

    async def acomplete(self, messages: list[dict], tools: list[dict] | None = None) -> Reply: ...


_RESUME = "; finished tasks are kept: raise the budget in wikiskill.yaml and run the command again to continue"


class Meter:
    """Usage per role for one command, and the budget that stops it cleanly.

    In a worker process, `shared` is a multiprocessing Array('d', 2) holding the calls and USD
    spent by every worker of the step, so the budget holds across processes.
    """

    def __init__(self, budget: BudgetSettings | None = None, spent: Usage | None = None, shared: Any = None):
        self.budget = budget or BudgetSettings()
        self.before = spent or Usage()
        self.shared = shared
        self.by_role: dict[str, Usage] = {}
        self._lock = threading.Lock()

    def add(self, role: str, usage: Usage) -> None:
        with self._lock:
            self.by_role[role] = self.by_role.get(role, Usage()) + usage
        if self.shared is not None:
            with self.shared.get_lock():
                self.shared[0] += usage.calls
                self.shared[1] += usage.cost_usd

    @property
    def total(self) -> Usage:
        with self._lock:
            return sum(self.by_role.values(), Usage())

    def snapshot(self) -> dict[str, Usage]:
        with self._lock:
            return dict(self.by_role)

    def spent(self) -> Usage:
        """What counts against the budget: earlier parts of the run plus every call since."""
        if self.shared is None:
            return self.before + self.total
        with self.shared.get_lock():
            calls, usd = self.shared[0], self.shared[1]
        return self.before + Usage(calls=int(calls), cost_usd=usd)

    def check(self) -> None:
        """Raise BudgetExceeded once the run (including earlier, resumed parts) is over budget."""
        spent = self.spent()
        if self.budget.max_usd is not None and spent.cost_usd >= self.budget.max_usd:
            raise BudgetExceeded(f"budget reached: ${spent.cost_usd:.4f} of budget.max_usd ${self.budget.max_usd}"
                                 f"{_RESUME}")
        if self.budget.max_calls is not None and spent.calls >= self.budget.max_calls:
            raise BudgetExceeded(f"budget reached: {spent.calls} of budget.max_calls {self.budget.max_calls} "
                                 f"model calls{_RESUME}")


class ResponseCache:
    """Replies keyed by model, messages, tools and sampling parameters, in one sqlite file."""

    def __init__(self, path: Path):
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)")
        self._lock = threading.Lock()

    @staticmethod
    def key(request: dict) -> str:
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


def _litellm():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


class LiteLLMModel:
    """A ChatModel over any litellm model string, for one role."""

    def __init__(
        self,
        settings: RoleSettings,
        llm: LLMSettings,
        role: str,
        meter: Meter,
        cache: ResponseCache | None = None,
    ):
        if not settings.model:
            raise ModelError(f"no model configured for the {role}")
        self.settings = settings
        self.llm = llm
        self.role = role
        self.meter = meter
        # Replies are cached only at temperature 0: at a higher one a cache would replay one sample.
        self.cache = cache if settings.temperature == 0 else None
        # The runner checks the budget between agent tasks, so a task in flight is never cut short.
        self.checks_budget = role != "agent"
        # The environment's secrets are read once, not rescanned for every reply.
        self._scrub = Scrubber()

    def _request(self, messages: list[dict], tools: list[dict] | None) -> dict:
        request: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "temperature": self.settings.temperature,
        }
        if tools:
            request["tools"] = tools
        if self.settings.max_tokens:
            request["max_tokens"] = self.settings.max_tokens
        if self.settings.api_base:
            request["api_base"] = self.settings.api_base
        return request

    def _call_kwargs(self, request: dict) -> dict:
        kwargs = dict(request, timeout=self.llm.timeout, num_retries=0, max_retries=0)
        if request.get("api_base") and request["model"].startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            kwargs["api_key"] = "no-key-needed"  # local OpenAI-compatible servers ignore it
        return kwargs

    def _cached(self, request: dict) -> tuple[str | None, Reply | None]:
        """A hit costs nothing and makes no request: its usage counts no call and no USD."""
        if self.cache is None:
            return None, None
        key = ResponseCache.key(request)
        return key, self.cache.get(key)

    def _finish(self, key: str | None, response: Any, litellm: Any) -> Reply:
        reply = _to_reply(response, litellm, self._scrub)
        self.meter.add(self.role, reply.usage)
        if self.cache is not None and key is not None:
            self.cache.put(key, reply)
        return reply

    def complete(self, messages: list[dict], tools: list[dict] | None = None) -> Reply:
        request = self._request(messages, tools)
        key, hit = self._cached(request)
        if hit is not None:
            return hit
        litellm = _litellm()
        for attempt in self._attempts():
            try:
                return self._finish(key, litellm.completion(**self._call_kwargs(request)), litellm)
            except Exception as exc:  # noqa: BLE001 - _backoff classifies it
                time.sleep(self._backoff(exc, attempt))
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def acomplete(self, messages: list[dict], tools: list[dict] | None = None) -> Reply:
        request = self._request(messages, tools)
        key, hit = self._cached(request)
        if hit is not None:
            return hit
        litellm = _litellm()
        for attempt in self._attempts():
            try:
                return self._finish(key, await litellm.acompletion(**self._call_kwargs(request)), litellm)
            except Exception as exc:  # noqa: BLE001 - _backoff classifies it
                await asyncio.sleep(self._backoff(exc, attempt))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _attempts(self) -> Iterator[int]:
        """Attempt numbers up to the retry budget, checking the spending budget before each."""
        for attempt in range(self.llm.retries + 1):
            if self.checks_budget:
                self.meter.check()
            yield attempt

    def _backoff(self, exc: Exception, attempt: int) -> float:
        """Seconds to wait before retrying `exc`; raise ModelError when it is final."""
        if isinstance(exc, (BudgetExceeded, ModelError)):
            raise exc
        status = getattr(exc, "status_code", None)
        retryable = status in RETRYABLE_STATUS or type(exc).__name__ in {
            "Timeout", "APIConnectionError", "RateLimitError", "InternalServerError",
            "ServiceUnavailableError", "BadGatewayError", "APIError",
        }
        summary = scrub(f"{self.role} model {self.settings.model}: {type(exc).__name__}: {_first_line(exc)}")
        if not retryable:
            raise ModelError(summary) from None
        if attempt >= self.llm.retries:
            raise ModelError(f"{summary} (gave up after {attempt + 1} attempts)") from None
        retry_after = _retry_after(exc)
        delay = min(30.0, 0.5 * 2**attempt)
        return max(retry_after or 0.0, delay * (0.5 + random.random()))


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else ""


def _retry_after(exc: Exception) -> float | None:
    for source in (getattr(exc, "response", None), exc):
        headers = getattr(source, "headers", None) or getattr(source, "litellm_response_headers", None)
        if headers is None:
            continue
        try:
            value = headers.get("retry-after") or headers.get("Retry-After")
            return min(float(value), 60.0) if value is not None else None
        except (TypeError, ValueError):
            return None
    return None


def _to_reply(response: Any, litellm: Any, scrub_text: Scrubber) -> Reply:
    message = response.choices[0].message
    calls = []
    for index, call in enumerate(getattr(message, "tool_calls", None) or []):
        raw = scrub_text(call.function.arguments or "")
        try:
            arguments = json.loads(raw) if raw.strip() else {}
            if not isinstance(arguments, dict):
                arguments = None
        except (json.JSONDecodeError, RecursionError):  # hostile output: the role answers with an error
            arguments = None
        calls.append(ToolCall(id=call.id or f"call_{index}", name=call.function.name or "", arguments=arguments, raw_arguments=raw))
    usage = getattr(response, "usage", None)
    return Reply(
        content=scrub_text(message.content) if isinstance(message.content, str) else message.content,
        tool_calls=calls,
        usage=Usage(
            calls=1,
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            cost_usd=_cost(response, litellm),
        ),
    )


def _cost(response: Any, litellm: Any) -> float:
    """USD of one response: litellm already priced it while logging the call (None when it has no
    price for the model), so it is read back rather than computed twice."""
    hidden = getattr(response, "_hidden_params", None) or {}
    if "response_cost" in hidden:
        return float(hidden["response_cost"] or 0.0)
    try:
        return float(litellm.completion_cost(completion_response=response) or 0.0)
    except Exception:  # noqa: BLE001 - litellm raises for models it has no price for
        return 0.0


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def extract_json(text: str | None) -> Any:
    """The first JSON object in model text: plain, fenced, or surrounded by prose.

    Raises ValueError with the parse error, which the caller can send back to the model.
    """
    if not text or not text.strip():
        raise ValueError("the reply is empty; expected one JSON object")
    candidates = [match.group(1) for match in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    error = "no JSON object found"
    for candidate in candidates:
        start = candidate.find("{")
        attempts = 0
        while start != -1 and attempts < 50:  # bounded: hostile text may hold thousands of "{"
            attempts += 1
            try:
                value, _ = decoder.raw_decode(candidate, start)
                return value
            except json.JSONDecodeError as exc:
                error = f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            except RecursionError:
                raise ValueError("the JSON is nested too deeply") from None
            start = candidate.find("{", start + 1)
    raise ValueError(error)
