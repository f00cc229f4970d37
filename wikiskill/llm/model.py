"""`LiteLLMModel`, the ChatModel of every LLM role: a call's attempts, synchronous or async, and
what each reply costs (the meter, the budget, the response cache, the server's measured speed)."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

from pydantic import BaseModel

from ..core.errors import ModelError
from ..core.redact import Scrubber
from ..roles.settings import Role, RoleSettings, StructuredOutput, ToolProtocol
from ..telemetry.spans import model_call_span
from .backend import import_litellm, to_reply
from .cache import ResponseCache
from .call import Call, seconds_allowed
from .chat import Message, Reply, ToolSpec
from .meter import Meter
from .profile import ModelProfile
from .settings import LLMSettings
from .speed import SpeedBook


class LiteLLMModel:
    """A ChatModel over any litellm model string, for one role.

    Its tool protocol and response_format start as configured; in `auto` they settle on what
    the model and its server turn out to do, for the rest of this object's life (`profile`).
    """

    def __init__(
        self,
        settings: RoleSettings,
        llm: LLMSettings,
        role: Role,
        meter: Meter,
        cache: ResponseCache | None = None,
        speeds: SpeedBook | None = None,
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
        self._text_ids = itertools.count(1)
        self.profile = ModelProfile(settings, role)
        # The command's roles share a server's measured speed (`speeds`), so a role's first call is
        # sized from what the others measured.
        self.speed = (speeds or SpeedBook()).of(settings.model, settings.api_base)

    @property
    def protocol(self) -> ToolProtocol:
        """The tool protocol in force now."""
        return self.profile.forms.protocol

    @property
    def structured(self) -> StructuredOutput:
        """Whether a JSON schema may go as `response_format` now."""
        return self.profile.forms.structured

    @property
    def context_window(self) -> int:
        return self.profile.context_window

    def price_known(self) -> bool:
        return self.profile.price_known()

    def prompt_budget(self) -> int | None:
        """The most prompt tokens a request for one structured reply (`response_model`) can hold
        to be answered in the time such a call is allowed at the server's measured speed, and to
        fit the window; None until the speed is measured."""
        reserved = self.profile.reserved_tokens()
        in_time = self.speed.prompt_budget(seconds_allowed(self.llm, one_reply=True), reserved)
        return None if in_time is None else min(in_time, self.context_window - reserved)

    def call(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        response_model: type[BaseModel] | None = None,
        call_required: bool = False,
    ) -> Call:
        """A new call, its request built from the forms in force now."""
        return Call(self.profile, self.llm, self.speed, messages, tools, response_model, call_required)

    def complete(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        response_model: type[BaseModel] | None = None,
        call_required: bool = False,
    ) -> Reply:
        call = self.call(messages, tools, response_model, call_required)
        with model_call_span(self.role, self.settings.model or "", call.request) as span:
            hit = self._cached(call)
            if hit is not None:
                span.set({"wikiskill.cache_hit": True})
                return hit
            litellm = import_litellm()
            while True:
                kwargs = self._attempt(call)
                started = time.monotonic()
                try:
                    response = litellm.completion(**kwargs)
                except Exception as exc:  # noqa: BLE001 - Call.recover classifies it
                    time.sleep(call.recover(exc))
                    continue
                reply = self._finish(call, response, litellm, time.monotonic() - started)
                span.usage(reply.usage, call.attempt)
                return reply

    async def acomplete(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        response_model: type[BaseModel] | None = None,
        call_required: bool = False,
    ) -> Reply:
        call = self.call(messages, tools, response_model, call_required)
        with model_call_span(self.role, self.settings.model or "", call.request) as span:
            hit = self._cached(call)
            if hit is not None:
                span.set({"wikiskill.cache_hit": True})
                return hit
            litellm = import_litellm()
            while True:
                kwargs = self._attempt(call)
                started = time.monotonic()
                try:
                    response = await litellm.acompletion(**kwargs)
                except Exception as exc:  # noqa: BLE001 - Call.recover classifies it
                    await asyncio.sleep(call.recover(exc))
                    continue
                reply = self._finish(call, response, litellm, time.monotonic() - started)
                span.usage(reply.usage, call.attempt)
                return reply

    def _cached(self, call: Call) -> Reply | None:
        """A hit costs nothing and makes no request: its usage counts no call and no USD."""
        return self.cache.get(ResponseCache.key(call.request)) if self.cache is not None else None

    def _attempt(self, call: Call) -> dict[str, Any]:
        if self.checks_budget:
            self.meter.check()
        return call.kwargs()

    def _finish(self, call: Call, response: Any, litellm: Any, seconds: float) -> Reply:
        reply = to_reply(response, litellm, self._scrub)
        self.speed.record(reply.usage.prompt_tokens, reply.usage.completion_tokens, seconds)
        reply = call.finish(reply, self._text_ids)
        self.meter.add(self.role, reply.usage)
        if self.cache is not None:
            self.cache.put(ResponseCache.key(call.request), reply)
        return reply
