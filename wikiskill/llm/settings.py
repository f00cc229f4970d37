"""The sections of wikiskill.yaml for model calls: retries, timeouts and caching (`llm`) and
spending limits (`budget`). In core's layer: it imports only `core`."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from ..core.section import Section


class CacheBreakpoints(StrEnum):
    """Where a request marks prompt-cache breakpoints (`cache_control`)."""

    AUTO = "auto"
    ALWAYS = "always"
    OFF = "off"


class BudgetSettings(Section):
    max_usd: float | None = Field(None, ge=0)
    """Stop cleanly between tasks once the run has spent this much (USD), and start no round whose
    estimate (`wikiskill estimate`) would take the run past it; empty = no limit."""
    max_calls: int | None = Field(None, ge=0)
    """Stop cleanly once the run has made this many model calls; empty = no limit."""
    judge_share: float | None = Field(None, gt=0, le=1)
    """The most of `max_usd` the judge of a judged suite may spend in one command (0.25 = a
    quarter); once it has, the command stops cleanly as at `max_usd`; empty = no limit of its own."""


class LLMSettings(Section):
    retries: int = Field(4, ge=0)
    """Retries of a call after a rate limit, connection or server error (backoff with jitter,
    honouring Retry-After); authentication, permission, unknown-model and bad-request errors fail
    at once."""
    timeout: float = Field(120.0, gt=0)
    """Seconds before one model call times out; a timed-out call is retried once, with twice the
    time, and a second timeout is final. Once a server's speed is measured (a slow local server),
    a call it needs longer for gets twice its expected time (prompt and a full reply), up to ten
    times this."""
    cache: bool = False
    """Keep an on-disk cache of replies at temperature 0 in `.wikiskill/` (a re-run is then free
    and reproducible)."""
    cache_breakpoints: CacheBreakpoints = CacheBreakpoints.AUTO
    """Provider prompt caching: requests mark the end of the system prompt (the tools come before
    it) and the end of the conversation as cache breakpoints (`cache_control`), so the next turn
    reads the prompt so far from the provider's cache. `auto` marks them where litellm says the
    provider needs marks (Anthropic's Claude, also on Bedrock, Vertex AI and Azure AI; OpenAI-style
    providers cache a repeated prefix by themselves); `always` marks every request (an
    OpenAI-compatible proxy in front of Claude); `off` never does."""
