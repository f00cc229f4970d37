"""What one role's model is (its context window, the completion cap to send, whether it takes a
JSON schema) and the forms its requests take, settled once per model and shared by its calls."""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any

from ..roles.settings import Role, RoleSettings, StructuredOutput, ToolProtocol
from .backend import import_litellm, needs_cache_marks
from .settings import CacheBreakpoints

DEFAULT_CONTEXT_WINDOW = 8192
MAX_DEFAULT_COMPLETION_TOKENS = 2048


@dataclass(frozen=True)
class Forms:
    """The form of a request: how tools are offered, and whether a JSON schema may go as
    `response_format`."""

    protocol: ToolProtocol
    structured: StructuredOutput


class ModelProfile:
    """One role's model as its requests need it.

    The forms start as configured. In `auto` each settles once and one way, on what the model and
    its server turn out to do (native tools give way to the text protocol, a refused JSON schema to
    none), under a lock, for the rest of the profile's life. A call reads the forms once and decides
    from its own copy: the tasks of an eval share one model, so a call in flight never switches
    protocol half-way, and a call refused as another one was settles to the same form instead of
    failing because the other settled first.
    """

    def __init__(self, settings: RoleSettings, role: Role):
        self.settings = settings
        self.role = role
        self._forms = Forms(settings.tool_protocol, settings.response_format)
        self._window: tuple[int, bool] | None = None
        self._marks: bool | None = None
        self._lock = threading.Lock()

    @property
    def forms(self) -> Forms:
        """The forms in force now (an immutable copy)."""
        with self._lock:
            return self._forms

    def settle_text_protocol(self) -> Forms:
        """Tools go as text from now on, if the protocol was `auto`; the forms now in force."""
        with self._lock:
            if self._forms.protocol == ToolProtocol.AUTO:
                self._forms = replace(self._forms, protocol=ToolProtocol.TEXT)
            return self._forms

    def settle_without_schema(self) -> Forms:
        """No JSON schema goes as `response_format` from now on, if that was `auto`; the forms now
        in force."""
        with self._lock:
            if self._forms.structured == StructuredOutput.AUTO:
                self._forms = replace(self._forms, structured=StructuredOutput.OFF)
            return self._forms

    def model_info(self) -> dict[str, Any]:
        litellm = import_litellm()
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
            known = self.model_info().get("max_input_tokens")
            window = self.settings.context_window or known or DEFAULT_CONTEXT_WINDOW
            self._window = (int(window), bool(known))
        return self._window

    def marks_cache(self, breakpoints: CacheBreakpoints) -> bool:
        """Whether requests carry prompt-cache breakpoints under `breakpoints` (`llm.cache_breakpoints`)."""
        if breakpoints == CacheBreakpoints.AUTO:
            if self._marks is None:
                self._marks = needs_cache_marks(self.settings.model or "")
            return self._marks
        return breakpoints == CacheBreakpoints.ALWAYS

    def price_known(self) -> bool:
        info = self.model_info()
        return bool(info.get("input_cost_per_token") or info.get("output_cost_per_token"))

    def price(self, prompt_tokens: float, completion_tokens: float) -> float | None:
        """USD of these tokens at the model's list price in litellm's model map (no prompt-cache
        discount); None for a model it has no price for."""
        if not self.price_known():
            return None
        info = self.model_info()
        return prompt_tokens * float(info.get("input_cost_per_token") or 0) + completion_tokens * float(
            info.get("output_cost_per_token") or 0
        )

    def reserved_tokens(self) -> int:
        """Tokens of the window kept for the completion."""
        return self.settings.max_tokens or min(MAX_DEFAULT_COMPLETION_TOKENS, self.context_window // 4)

    def completion_tokens(self) -> int | None:
        """The completion cap to send: the setting, or for a model litellm does not know (a local
        server, which would otherwise generate until its context is full) the reserved share."""
        known = self._context()[1]
        return None if known and not self.settings.max_tokens else self.reserved_tokens()

    def sends_schema(self, structured: StructuredOutput) -> bool:
        """Whether a JSON schema goes as `response_format` under `structured`."""
        if structured == StructuredOutput.AUTO:
            if self.settings.api_base:
                return True
            litellm = import_litellm()
            try:
                return bool(litellm.supports_response_schema(model=self.settings.model))
            except Exception:  # noqa: BLE001 - unknown models
                return False
        return structured == StructuredOutput.JSON_SCHEMA
