"""One logical model call: its request, shaped to the model's forms, context window and measured
speed, and the decision after each failed attempt (back off, retry at once in another form, or
give up with an error that says what to change)."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from ..core.errors import BudgetExceeded, ContextOverflow, ModelError, ProviderUnavailable
from ..core.redact import scrub
from ..roles.settings import StructuredOutput, ToolProtocol
from .backend import with_cache_marks
from .chat import Message, Reply, ToolCall, ToolSpec
from .context import conversation_tokens, estimate_tokens, fit_messages, sizes, tools_tokens
from .credentials import key_advice, key_names
from .profile import ModelProfile
from .settings import LLMSettings
from .speed import ServerSpeed
from .toolcalls import (
    TEXT_CALL_PREFIX,
    as_text_conversation,
    call_schema,
    describe_tools,
    json_schema,
    parse_text_calls,
)

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
TRANSIENT_ERRORS = {
    "Timeout",
    "APIConnectionError",
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "BadGatewayError",
    "APIError",
}
MIN_DEFAULT_COMPLETION_TOKENS = 512
"""Without `max_tokens`, the reply's share of the window shrinks to this before a request is
refused as too long."""
CONTEXT_SHRINK = 0.7
CONTEXT_RETRIES = 2
TIMEOUT_SHARE = 0.5
"""A turn of a conversation is sized to take at most this share of `llm.timeout` at the server's
measured speed."""
SPEED_MARGIN = 2.0
"""A call's timeout is at least this many times what its request takes at the measured speed
(prompt and a full reply), so a slow server's long reply is not timed out as a failure."""
MAX_TIMEOUT_FACTOR = 10.0
"""The measured speed raises a call's timeout to at most this many times `llm.timeout` (a hung
server is still noticed)."""


def seconds_allowed(llm: LLMSettings, one_reply: bool) -> float:
    """How long a request may take at the server's measured speed: a turn of a conversation (the
    agent's, the proposer's) a share of `llm.timeout`; a role's one structured reply (the
    maintainer's pages, the self-written skills), which the role sizes itself, the longest timeout
    a call gets, less the margin."""
    return llm.timeout * (MAX_TIMEOUT_FACTOR / SPEED_MARGIN if one_reply else TIMEOUT_SHARE)


class Call:
    """One logical call: the request as the model's forms and context window want it, and the
    decisions between attempts. It reads the model's forms once and keeps its own copy, changed
    only when this call settles them (see `ModelProfile`)."""

    def __init__(
        self,
        profile: ModelProfile,
        llm: LLMSettings,
        speed: ServerSpeed,
        messages: list[Message],
        tools: list[ToolSpec] | None,
        response_model: type[BaseModel] | None,
        call_required: bool = False,
    ):
        self.profile = profile
        self.llm = llm
        self.speed = speed
        self.forms = profile.forms
        self.messages = messages
        self.tools = tools or None
        self.response_model = response_model
        self.call_required = call_required
        self.attempt = 0
        self.timeouts = 0
        self.waited: list[float] = []
        """Each attempt's timeout, in seconds."""
        self.overflows = 0
        self.shrink = 1.0
        self.notes: list[str] = []
        self.request = self._build()

    def _text_protocol(self) -> bool:
        return bool(self.tools) and self.forms.protocol == ToolProtocol.TEXT

    def _build(self) -> dict[str, Any]:
        """The request: the conversation fitted (as the model layer keeps it, calls and results
        paired) into the window, then written in the call's tool protocol."""
        profile = self.profile
        settings = profile.settings
        text = self._text_protocol()
        tools_size = estimate_tokens(describe_tools(self.tools or [])) if text else tools_tokens(self.tools)
        completion = profile.completion_tokens()
        reserved = profile.reserved_tokens()
        notes = list(self.notes)
        try:
            messages = self._fit(tools_size, reserved, completion or reserved)
        except ContextOverflow:
            smaller = min(MIN_DEFAULT_COMPLETION_TOKENS, reserved)
            if settings.max_tokens or smaller == reserved:
                raise
            self.notes = notes
            messages = self._fit(tools_size, smaller, smaller)
            self.notes.append(
                f"the reply's share of the window cut from {reserved} to {smaller} tokens to fit the request"
            )
            completion = completion and smaller
        tools = self.tools
        if text:
            messages, tools = as_text_conversation(messages, self.tools or []), None
        if profile.marks_cache(self.llm.cache_breakpoints):
            messages = with_cache_marks(messages)
        request: dict[str, Any] = {"model": settings.model, "messages": messages, "temperature": settings.temperature}
        if tools:
            request["tools"] = tools
        if completion:
            request["max_tokens"] = completion
        if settings.api_base:
            request["api_base"] = settings.api_base
        schema = profile.sends_schema(self.forms.structured)
        if self.response_model is not None and schema:
            request["response_format"] = _schema_format(self.response_model.__name__, json_schema(self.response_model))
        elif self.call_required and text and schema:
            request["response_format"] = _schema_format("tool_call", call_schema(self.tools or []))
        return request

    def _fit(self, tools_size: int, reserved: int, completion: int) -> list[Message]:
        """The conversation fitted into the window less `reserved` tokens for the reply (and into
        what the server answers in time)."""
        window = self.profile.context_window
        budget = int((window - reserved) * self.shrink)
        messages = self._fit_in_time(self.messages, tools_size, budget, completion)
        if conversation_tokens(messages) + tools_size <= budget:
            return messages
        shrunk = f", shrunk to {self.shrink:.0%} after the server reported an overflow" if self.shrink < 1 else ""
        limit = f"{budget} prompt tokens (a context window of {window} less {reserved} kept for the reply{shrunk})"
        fitted = fit_messages(messages, budget, tools_size, self.profile.role, limit)
        self.notes += [f"context window {window}: {note}" for note in fitted.notes]
        return fitted.messages

    def _fit_in_time(self, messages: list[Message], tools_size: int, budget: int, completion: int) -> list[Message]:
        """`messages` cut to what the server's measured speed answers in the time the request is
        allowed (`seconds_allowed`). Advisory, unlike the window: a noisy estimate never cuts below
        a quarter of the window, and a request whose fixed part (the system prompt, the tools) does
        not fit the time is sent at the window's size rather than failed."""
        seconds = seconds_allowed(self.llm, one_reply=self.response_model is not None)
        in_time = self.speed.prompt_budget(seconds, completion)
        size = conversation_tokens(messages) + tools_size
        if in_time is None or size <= max(in_time, budget // 4) or in_time >= budget:
            return messages
        in_time = max(in_time, budget // 4)
        try:
            fitted = fit_messages(messages, in_time, tools_size, self.profile.role)
        except ContextOverflow:
            self.notes.append(
                f"the server's measured speed allows {in_time} prompt tokens, less than the "
                "request's fixed part: sent at the context window's size"
            )
            return messages
        why = f"the server's measured speed ({in_time} prompt tokens in {seconds:.0f}s)"
        self.notes += [f"{why}: {note}" for note in fitted.notes]
        return fitted.messages

    def kwargs(self) -> dict[str, Any]:
        """litellm's arguments for the next attempt."""
        self.attempt += 1
        self.waited.append(self._timeout())
        kwargs = dict(self.request, timeout=self.waited[-1], num_retries=0, max_retries=0)
        if (
            self.request.get("api_base")
            and self.request["model"].startswith("openai/")
            and not os.environ.get("OPENAI_API_KEY")
        ):
            kwargs["api_key"] = "no-key-needed"  # local OpenAI-compatible servers ignore it
        return kwargs

    def _timeout(self) -> float:
        """`llm.timeout` (twice it after a timeout), or longer when the server's measured speed
        says the request takes longer than that share of it."""
        timeout = self.llm.timeout * (2 if self.timeouts else 1)
        completion = self.request.get("max_tokens") or self.profile.reserved_tokens()
        prompt = conversation_tokens(self.request["messages"]) + tools_tokens(self.request.get("tools"))
        expected = self.speed.seconds(prompt, completion)
        if expected is None or SPEED_MARGIN * expected <= timeout:
            return timeout
        sized = min(SPEED_MARGIN * expected, self.llm.timeout * MAX_TIMEOUT_FACTOR)
        if sized > timeout and self.attempt == 1:
            self.notes.append(
                f"timeout {sized:.0f}s rather than {timeout:g}s: the server's measured speed gives this request "
                f"about {expected:.0f}s ({prompt} prompt tokens, up to {completion} in the reply)"
            )
        return max(timeout, sized)

    def finish(self, reply: Reply, text_ids: Iterator[int]) -> Reply:
        """`reply` with the calls it wrote as text (their ids drawn from `text_ids`) and the notes
        of this call. In `auto`, a reply without a native call settles the text protocol."""
        if self.tools and not reply.tool_calls and self.forms.protocol != ToolProtocol.NATIVE:
            names = {tool["function"]["name"] for tool in self.tools}
            reply.tool_calls = [
                ToolCall(f"{TEXT_CALL_PREFIX}{next(text_ids)}", call.name, call.arguments, call.raw_arguments)
                for call in parse_text_calls(reply.content, names)
            ]
            if self.forms.protocol == ToolProtocol.AUTO and (reply.tool_calls or self.call_required):
                self.forms = self.profile.settle_text_protocol()
                self.notes.append("no native tool call: the text tool protocol from now on")
        reply.notes = self.notes + reply.notes
        return reply

    def recover(self, exc: Exception) -> float:
        """Seconds to wait before the next attempt; raise ModelError when the failure is final."""
        if isinstance(exc, (BudgetExceeded, ModelError)):
            raise exc
        settings, role = self.profile.settings, self.profile.role
        name = type(exc).__name__
        status = getattr(exc, "status_code", None)
        text = _first_line(exc)
        summary = scrub(f"{role} model {settings.model}: {name}: {text}")
        if _is_overflow(name, text):
            return self._retry_smaller(summary)
        if name == "AuthenticationError" or status == 401 or "credentials" in text.lower() or "api_key" in text:
            raise ModelError(f"{summary} — {key_advice(settings)}") from None
        if name == "PermissionDeniedError" or status == 403:
            raise ModelError(f"{summary} — the key in {key_names(settings)} may not use this model") from None
        if name == "NotFoundError" or status == 404:
            raise ModelError(
                f"{summary} — check `{role}.model` (or `model`) and `api_base` in wikiskill.yaml"
            ) from None
        if self._degrade(status, text):
            return 0.0
        if name == "Timeout" or status == 408 or "timed out" in text.lower():
            waited = " and ".join(f"{seconds:.0f}s" for seconds in self.waited)
            if self.timeouts:
                raise ProviderUnavailable(
                    f"{summary} (timed out twice, after {waited}: raise llm.timeout or use a faster model)"
                ) from None
            self.timeouts += 1
            self.notes.append(f"timed out after {waited}; retried once with twice the time")
            return 0.0
        if status not in RETRYABLE_STATUS and name not in TRANSIENT_ERRORS:
            raise ModelError(summary) from None
        if self.attempt > self.llm.retries:
            raise ProviderUnavailable(f"{summary} (gave up after {self.attempt} attempts)") from None
        delay = min(30.0, 0.5 * 2.0 ** (self.attempt - 1))
        return max(_retry_after(exc) or 0.0, delay * (0.5 + random.random()))

    def _degrade(self, status: int | None, text: str) -> bool:
        """In `auto`, a server that rejects response_format or tools gets the request without them."""
        if status is not None and status not in (400, 422, 500, 501):
            return False
        lowered = text.lower()
        if (
            "response_format" in self.request
            and self.forms.structured == StructuredOutput.AUTO
            and (status in (400, 422) or "schema" in lowered or "response_format" in lowered)
        ):
            self.forms = self.profile.settle_without_schema()
            self.notes.append(f"the server rejected response_format ({text[:120]}); sent without it from now on")
        elif "tools" in self.request and self.forms.protocol == ToolProtocol.AUTO and "tool" in lowered:
            self.forms = self.profile.settle_text_protocol()
            self.notes.append(f"the server rejected tools ({text[:120]}); the text tool protocol from now on")
        else:
            return False
        self.request = self._build()
        return True

    def _retry_smaller(self, summary: str) -> float:
        if self.overflows >= CONTEXT_RETRIES:
            sent = sizes(self.request["messages"], tools_tokens(self.request.get("tools")))
            raise ContextOverflow(
                f"{summary} (still too long after shrinking it {CONTEXT_RETRIES} times, to "
                f"{sent} of a {self.profile.context_window}-token window: set "
                f"`{self.profile.role}.context_window` to the server's real size)"
            ) from None
        self.overflows += 1
        self.shrink *= CONTEXT_SHRINK
        self.notes.append(f"the server reported a context overflow; fitted into {self.shrink:.0%} of the window")
        self.request = self._build()
        return 0.0


def _schema_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}}


def _is_overflow(name: str, text: str) -> bool:
    lowered = text.lower()
    return name == "ContextWindowExceededError" or any(
        phrase in lowered
        for phrase in (
            "context length",
            "context window",
            "context size",
            "too many tokens",
            "maximum context",
            "exceeds the available context",
        )
    )


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
