"""Model calls: the only module that imports litellm (lazily: its import alone costs seconds).

It owns retries (transient failures with backoff; a timeout once, with twice the time; errors
retrying cannot fix not at all), token and cost accounting per role, budgets, an optional on-disk
response cache, the tool protocols (native, or calls written as text), `response_format` JSON
schemas, fitting requests into the context window and into the time the server's measured speed
allows, and the credential check before a run.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import os
import random
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from ..core.config import (OFFLINE_MODEL, BudgetSettings, Config, LLMSettings, Role, RoleSettings, StructuredOutput,
                           ToolProtocol)
from .context import conversation_tokens, estimate_tokens, fit_messages, sizes, tools_tokens
from ..core.errors import BudgetExceeded, ContextOverflow, ModelError, ProviderUnavailable
from .jsontext import extract_json
from ..core.redact import Scrubber, scrub
from .toolcalls import (TEXT_CALL_PREFIX, as_text_conversation, call_schema, describe_tools, json_schema,
                        parse_text_calls)
from ..store.traces import Usage

__all__ = ["ChatModel", "LiteLLMModel", "Meter", "Reply", "ResponseCache", "ToolCall", "check_credentials",
           "extract_json"]

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
TRANSIENT_ERRORS = {"Timeout", "APIConnectionError", "RateLimitError", "InternalServerError",
                    "ServiceUnavailableError", "BadGatewayError", "APIError"}
LOAD_SKILL_TOOL_NAME = "load_skill"
DEFAULT_CONTEXT_WINDOW = 8192
MAX_DEFAULT_COMPLETION_TOKENS = 2048
MIN_DEFAULT_COMPLETION_TOKENS = 512
"""Without `max_tokens`, the reply's share of the window shrinks to this before a request is
refused as too long."""
CONTEXT_SHRINK = 0.7
CONTEXT_RETRIES = 2
TIMEOUT_SHARE = 0.5
"""A request is sized to take at most this share of `llm.timeout` at the server's measured speed."""
SPEED_SAMPLES = 16
KEY_ENV = {
    "openai": ("OPENAI_API_KEY",), "anthropic": ("ANTHROPIC_API_KEY",), "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",), "groq": ("GROQ_API_KEY",), "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",), "together_ai": ("TOGETHERAI_API_KEY",),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY",), "cohere": ("COHERE_API_KEY",), "xai": ("XAI_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",), "ollama": (), "ollama_chat": (), "hosted_vllm": (), "lm_studio": (),
}
"""The API key variable(s) of common providers, any one of which will do (a test checks them
against litellm's `validate_environment`); other providers ask litellm, whose import is slow."""


class ServerSpeed:
    """Seconds per prompt token and per completion token of one role's server, fitted (by
    non-negative least squares) to its recent calls. A slow local server is normal: knowing its
    speed, a request is cut before it is sent rather than timed out and sent again unchanged."""

    def __init__(self) -> None:
        self._calls: list[tuple[int, int, float]] = []  # (prompt tokens, completion tokens, seconds)
        self._first = True
        self._lock = threading.Lock()

    def record(self, prompt_tokens: int, completion_tokens: int, seconds: float) -> None:
        """Measure a finished call; the first is left out (it pays the client's own set-up)."""
        with self._lock:
            if self._first:
                self._first = False
            elif prompt_tokens > 0 and seconds > 0:
                self._calls = [*self._calls[-(SPEED_SAMPLES - 1):], (prompt_tokens, completion_tokens, seconds)]

    def prompt_budget(self, seconds: float, completion_tokens: int) -> int | None:
        """The most prompt tokens a request can hold to finish within `seconds` while generating
        `completion_tokens`; None until two calls of different sizes were measured."""
        with self._lock:
            calls = list(self._calls)
        if len({prompt for prompt, _, _ in calls}) < 2:
            return None
        import numpy as np
        from scipy.optimize import nnls

        (per_prompt, per_completion), _ = nnls(np.array([[p, c] for p, c, _ in calls], dtype=float),
                                               np.array([s for _, _, s in calls], dtype=float))
        if per_prompt <= 0:
            return None
        return max(0, int((seconds - per_completion * completion_tokens) / per_prompt))


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
    notes: list[str] = field(default_factory=list)
    """What the model layer did to get this reply (context fitted, a setting it fell back from)."""

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
    """What roles need from a model. Tests may pass any object with these methods.

    `response_model`: the reply should be a JSON object of this pydantic model (its schema may be
    sent as `response_format`; the role still extracts and validates the JSON itself).
    `call_required`: every reply should call one of `tools` (the proposer's loop); under the text
    protocol the reply may then be held to a call's JSON schema with `response_format`.
    """

    def complete(self, messages: list[dict], tools: list[dict] | None = None,
                 response_model: type[BaseModel] | None = None, call_required: bool = False) -> Reply: ...

    async def acomplete(self, messages: list[dict], tools: list[dict] | None = None,
                        response_model: type[BaseModel] | None = None, call_required: bool = False) -> Reply: ...


_RESUME = "; finished tasks are kept: raise the budget in wikiskill.yaml and run the command again to continue"


class Meter:
    """Usage per role for one command, and the budget that stops it cleanly.

    The command's meter is the one ledger: workers elsewhere count on meters of their own and
    hand over what they counted (`drain`) with each result.
    """

    def __init__(self, budget: BudgetSettings | None = None, spent: Usage | None = None):
        self.budget = budget or BudgetSettings()
        self.before = spent or Usage()
        self.by_role: dict[Role, Usage] = {}
        self._lock = threading.Lock()

    def add(self, role: Role, usage: Usage) -> None:
        with self._lock:
            self.by_role[role] = self.by_role.get(role, Usage()) + usage

    @property
    def total(self) -> Usage:
        with self._lock:
            return sum(self.by_role.values(), Usage())

    def snapshot(self) -> dict[Role, Usage]:
        with self._lock:
            return dict(self.by_role)

    def drain(self) -> dict[Role, Usage]:
        """Usage per role counted since the last drain, and count afresh."""
        with self._lock:
            counted, self.by_role = self.by_role, {}
        return counted

    def spent(self) -> Usage:
        """What counts against the budget: earlier parts of the run plus every call since."""
        return self.before + self.total

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


def _litellm():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


class LiteLLMModel:
    """A ChatModel over any litellm model string, for one role.

    Its tool protocol and response_format start as configured; in `auto` they settle on what
    the model and its server turn out to do, for the rest of this object's life.
    """

    def __init__(
        self,
        settings: RoleSettings,
        llm: LLMSettings,
        role: Role,
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
        self.checks_budget = role != Role.AGENT
        # The environment's secrets are read once, not rescanned for every reply.
        self._scrub = Scrubber()
        self.protocol = settings.tool_protocol
        self.structured = settings.response_format
        self._window: tuple[int, bool] | None = None
        self._text_ids = itertools.count(1)
        self.speed = ServerSpeed()

    # -- what the model is --------------------------------------------------------------------

    def _model_info(self) -> dict:
        litellm = _litellm()
        try:
            return litellm.get_model_info(self.settings.model) or {}
        except Exception:  # noqa: BLE001 - litellm raises for models it does not know
            return {}

    @property
    def context_window(self) -> int:
        """Prompt tokens the model accepts: the role's setting, litellm's model info, or a default."""
        return self._context()[0]

    def _context(self) -> tuple[int, bool]:
        """(context window, whether litellm knows the model)."""
        if self._window is None:
            known = self._model_info().get("max_input_tokens")
            window = self.settings.context_window or known or DEFAULT_CONTEXT_WINDOW
            self._window = (int(window), bool(known))
        return self._window

    def price_known(self) -> bool:
        info = self._model_info()
        return bool(info.get("input_cost_per_token") or info.get("output_cost_per_token"))

    def _reserved_tokens(self) -> int:
        """Tokens of the window kept for the completion."""
        return self.settings.max_tokens or min(MAX_DEFAULT_COMPLETION_TOKENS, self.context_window // 4)

    def _completion_tokens(self) -> int | None:
        """The completion cap to send: the setting, or for a model litellm does not know (a local
        server, which would otherwise generate until its context is full) the reserved share."""
        known = self._context()[1]
        return None if known and not self.settings.max_tokens else self._reserved_tokens()

    def _sends_schema(self) -> bool:
        if self.structured == StructuredOutput.AUTO:
            if self.settings.api_base:
                return True
            litellm = _litellm()
            try:
                return bool(litellm.supports_response_schema(model=self.settings.model))
            except Exception:  # noqa: BLE001 - unknown models
                return False
        return self.structured == StructuredOutput.JSON_SCHEMA

    # -- calls --------------------------------------------------------------------------------

    def complete(self, messages: list[dict], tools: list[dict] | None = None,
                 response_model: type[BaseModel] | None = None, call_required: bool = False) -> Reply:
        call = _Call(self, messages, tools, response_model, call_required)
        hit = call.cached()
        if hit is not None:
            return hit
        litellm = _litellm()
        while True:
            kwargs = call.kwargs()
            started = time.monotonic()
            try:
                response = litellm.completion(**kwargs)
            except Exception as exc:  # noqa: BLE001 - _Call.recover classifies it
                time.sleep(call.recover(exc))
                continue
            return call.finish(response, litellm, time.monotonic() - started)

    async def acomplete(self, messages: list[dict], tools: list[dict] | None = None,
                        response_model: type[BaseModel] | None = None, call_required: bool = False) -> Reply:
        call = _Call(self, messages, tools, response_model, call_required)
        hit = call.cached()
        if hit is not None:
            return hit
        litellm = _litellm()
        while True:
            kwargs = call.kwargs()
            started = time.monotonic()
            try:
                response = await litellm.acompletion(**kwargs)
            except Exception as exc:  # noqa: BLE001 - _Call.recover classifies it
                await asyncio.sleep(call.recover(exc))
                continue
            return call.finish(response, litellm, time.monotonic() - started)


class _Call:
    """One logical call: the request as the model's protocol and context window want it, and the
    decisions between attempts (back off, retry at once in another form, or give up)."""

    def __init__(self, model: LiteLLMModel, messages: list[dict], tools: list[dict] | None,
                 response_model: type[BaseModel] | None, call_required: bool = False):
        self.model = model
        self.messages = messages
        self.tools = tools or None
        self.response_model = response_model
        self.call_required = call_required
        self.attempt = 0
        self.timeouts = 0
        self.overflows = 0
        self.shrink = 1.0
        self.notes: list[str] = []
        self.request = self._build()

    def _text_protocol(self) -> bool:
        return bool(self.tools) and self.model.protocol == ToolProtocol.TEXT

    def _build(self) -> dict:
        """The request: the conversation fitted (as the model layer keeps it, calls and results
        paired) into the window, then written in the model's tool protocol."""
        model = self.model
        settings = model.settings
        text = self._text_protocol()
        tools_size = estimate_tokens(describe_tools(self.tools or [])) if text else tools_tokens(self.tools)
        completion = model._completion_tokens()
        reserved = model._reserved_tokens()
        notes = list(self.notes)
        try:
            messages = self._fit(tools_size, reserved, completion or reserved)
        except ContextOverflow:
            smaller = min(MIN_DEFAULT_COMPLETION_TOKENS, reserved)
            if settings.max_tokens or smaller == reserved:
                raise
            self.notes = notes
            messages = self._fit(tools_size, smaller, smaller)
            self.notes.append(f"the reply's share of the window cut from {reserved} to {smaller} tokens "
                              "to fit the request")
            completion = completion and smaller
        tools = self.tools
        if text:
            messages, tools = as_text_conversation(messages, self.tools or []), None
        request: dict[str, Any] = {"model": settings.model, "messages": messages, "temperature": settings.temperature}
        if tools:
            request["tools"] = tools
        if completion:
            request["max_tokens"] = completion
        if settings.api_base:
            request["api_base"] = settings.api_base
        if self.response_model is not None and model._sends_schema():
            request["response_format"] = _schema_format(self.response_model.__name__, json_schema(self.response_model))
        elif self.call_required and text and model._sends_schema():
            request["response_format"] = _schema_format("tool_call", call_schema(self.tools or []))
        return request

    def _fit(self, tools_size: int, reserved: int, completion: int) -> list[dict]:
        """The conversation fitted into the window less `reserved` tokens for the reply (and into
        what the server answers in time)."""
        model = self.model
        budget = int((model.context_window - reserved) * self.shrink)
        messages = self._fit_in_time(self.messages, tools_size, budget, completion)
        if conversation_tokens(messages) + tools_size <= budget:
            return messages
        shrunk = f", shrunk to {self.shrink:.0%} after the server reported an overflow" if self.shrink < 1 else ""
        limit = (f"{budget} prompt tokens (a context window of {model.context_window} less {reserved} "
                 f"kept for the reply{shrunk})")
        fitted = fit_messages(messages, budget, tools_size, model.role, limit)
        self.notes += [f"context window {model.context_window}: {note}" for note in fitted.notes]
        return fitted.messages

    def _fit_in_time(self, messages: list[dict], tools_size: int, budget: int, completion: int) -> list[dict]:
        """`messages` cut to what the server's measured speed answers in a share of the timeout.
        Advisory, unlike the window: a noisy estimate never cuts below a quarter of the window, and
        a request whose fixed part (the system prompt, the tools) does not fit the time is sent at
        the window's size rather than failed."""
        model = self.model
        in_time = model.speed.prompt_budget(model.llm.timeout * TIMEOUT_SHARE, completion)
        size = conversation_tokens(messages) + tools_size
        if in_time is None or size <= max(in_time, budget // 4) or in_time >= budget:
            return messages
        in_time = max(in_time, budget // 4)
        try:
            fitted = fit_messages(messages, in_time, tools_size, model.role)
        except ContextOverflow:
            self.notes.append(f"the server's measured speed allows {in_time} prompt tokens, less than the "
                              "request's fixed part: sent at the context window's size")
            return messages
        why = f"the server's measured speed ({in_time} prompt tokens in {TIMEOUT_SHARE:.0%} of llm.timeout)"
        self.notes += [f"{why}: {note}" for note in fitted.notes]
        return fitted.messages

    def cached(self) -> Reply | None:
        """A hit costs nothing and makes no request: its usage counts no call and no USD."""
        cache = self.model.cache
        return cache.get(ResponseCache.key(self.request)) if cache is not None else None

    def kwargs(self) -> dict:
        model = self.model
        if model.checks_budget:
            model.meter.check()
        self.attempt += 1
        timeout = model.llm.timeout * (2 if self.timeouts else 1)
        kwargs = dict(self.request, timeout=timeout, num_retries=0, max_retries=0)
        if (self.request.get("api_base") and self.request["model"].startswith("openai/")
                and not os.environ.get("OPENAI_API_KEY")):
            kwargs["api_key"] = "no-key-needed"  # local OpenAI-compatible servers ignore it
        return kwargs

    def finish(self, response: Any, litellm: Any, seconds: float) -> Reply:
        model = self.model
        reply = _to_reply(response, litellm, model._scrub)
        model.speed.record(reply.usage.prompt_tokens, reply.usage.completion_tokens, seconds)
        if self.tools and not reply.tool_calls and model.protocol != ToolProtocol.NATIVE:
            names = {tool["function"]["name"] for tool in self.tools}
            reply.tool_calls = [ToolCall(f"{TEXT_CALL_PREFIX}{next(model._text_ids)}", call.name, call.arguments,
                                         call.raw_arguments) for call in parse_text_calls(reply.content, names)]
            if model.protocol == ToolProtocol.AUTO and (reply.tool_calls or self.call_required):
                model.protocol = ToolProtocol.TEXT
                self.notes.append("no native tool call: the text tool protocol from now on")
        reply.notes = self.notes + reply.notes
        model.meter.add(model.role, reply.usage)
        if model.cache is not None:
            model.cache.put(ResponseCache.key(self.request), reply)
        return reply

    def recover(self, exc: Exception) -> float:
        """Seconds to wait before the next attempt; raise ModelError when the failure is final."""
        if isinstance(exc, (BudgetExceeded, ModelError)):
            raise exc
        model = self.model
        name = type(exc).__name__
        status = getattr(exc, "status_code", None)
        text = _first_line(exc)
        summary = scrub(f"{model.role} model {model.settings.model}: {name}: {text}")
        if _is_overflow(name, text):
            return self._retry_smaller(summary)
        if name == "AuthenticationError" or status == 401 or "credentials" in text.lower() or "api_key" in text:
            raise ModelError(f"{summary} — {_key_advice(model.settings)}") from None
        if name == "PermissionDeniedError" or status == 403:
            raise ModelError(f"{summary} — the key in {_key_names(model.settings)} may not use this model") from None
        if name == "NotFoundError" or status == 404:
            raise ModelError(f"{summary} — check `{model.role}.model` (or `model`) and `api_base` "
                             "in wikiskill.yaml") from None
        if self._degrade(status, text):
            return 0.0
        if name == "Timeout" or status == 408 or "timed out" in text.lower():
            if self.timeouts:
                raise ProviderUnavailable(
                    f"{summary} (timed out twice, after {model.llm.timeout:g}s and {2 * model.llm.timeout:g}s: "
                    "raise llm.timeout or use a faster model)") from None
            self.timeouts += 1
            self.notes.append(f"timed out after {model.llm.timeout:g}s; retried once with twice the time")
            return 0.0
        if status not in RETRYABLE_STATUS and name not in TRANSIENT_ERRORS:
            raise ModelError(summary) from None
        if self.attempt > model.llm.retries:
            raise ProviderUnavailable(f"{summary} (gave up after {self.attempt} attempts)") from None
        delay = min(30.0, 0.5 * 2 ** (self.attempt - 1))
        return max(_retry_after(exc) or 0.0, delay * (0.5 + random.random()))

    def _degrade(self, status: int | None, text: str) -> bool:
        """In `auto`, a server that rejects response_format or tools gets the request without them."""
        model = self.model
        if status is not None and status not in (400, 422, 500, 501):
            return False
        lowered = text.lower()
        if "response_format" in self.request and model.structured == StructuredOutput.AUTO and (
                status in (400, 422) or "schema" in lowered or "response_format" in lowered):
            model.structured = StructuredOutput.OFF
            self.notes.append(f"the server rejected response_format ({text[:120]}); sent without it from now on")
        elif "tools" in self.request and model.protocol == ToolProtocol.AUTO and "tool" in lowered:
            model.protocol = ToolProtocol.TEXT
            self.notes.append(f"the server rejected tools ({text[:120]}); the text tool protocol from now on")
        else:
            return False
        self.request = self._build()
        return True

    def _retry_smaller(self, summary: str) -> float:
        if self.overflows >= CONTEXT_RETRIES:
            sent = sizes(self.request["messages"], tools_tokens(self.request.get("tools")))
            raise ContextOverflow(f"{summary} (still too long after shrinking it {CONTEXT_RETRIES} times, to "
                                  f"{sent} of a {self.model.context_window}-token window: set "
                                  f"`{self.model.role}.context_window` to the server's real size)") from None
        self.overflows += 1
        self.shrink *= CONTEXT_SHRINK
        self.notes.append(f"the server reported a context overflow; fitted into {self.shrink:.0%} of the window")
        self.request = self._build()
        return 0.0


def _schema_format(name: str, schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}}


def _is_overflow(name: str, text: str) -> bool:
    lowered = text.lower()
    return name == "ContextWindowExceededError" or any(
        phrase in lowered for phrase in ("context length", "context window", "context size", "too many tokens",
                                         "maximum context", "exceeds the available context"))


# -- credentials, checked before a run starts ----------------------------------------------------


def _provider(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else ""


def _key_names(settings: RoleSettings) -> str:
    names = KEY_ENV.get(_provider(settings.model or ""))
    return " or ".join(names) if names else "the provider's API key variable"


def _key_advice(settings: RoleSettings) -> str:
    return (f"set {_key_names(settings)} in the environment, or point `api_base` at a local "
            "OpenAI-compatible server")


def missing_key(settings: RoleSettings) -> str | None:
    """The environment variable(s) this role's model needs and lacks, as one phrase; None when
    none is missing. Known providers are checked without importing litellm."""
    model = settings.model or ""
    if model == OFFLINE_MODEL or settings.api_base:
        return None
    provider = _provider(model)
    if provider in KEY_ENV:
        names = KEY_ENV[provider]
        return None if not names or any(os.environ.get(name) for name in names) else " or ".join(names)
    missing = _litellm().validate_environment(model=model).get("missing_keys") or []
    return " and ".join(missing) or None


def check_credentials(config: Config) -> None:
    """Raise one ModelError naming the variable to set when a role's provider key is missing."""
    for role in Role:
        settings = config.role(role)
        missing = missing_key(settings)
        if missing:
            raise ModelError(f"the {role}'s model {settings.model} needs {missing}: set it in the environment, "
                             "or point `api_base` at a local OpenAI-compatible server (`--api-base URL`)")


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
