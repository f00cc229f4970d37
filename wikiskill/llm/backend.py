"""litellm, the library every model call goes through: the only module that imports it, and
only when a model is first called (its import alone costs seconds, which `status`, `log` and
`prompt` never pay). Its responses are read back here as `Reply`s with their cost."""

from __future__ import annotations

import json
import os
from typing import Any

from ..core.redact import Scrubber
from ..store.traces import Usage
from .chat import Message, Reply, ToolCall


def import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


CACHE_MARK = {"type": "ephemeral"}


def needs_cache_marks(model: str) -> bool:
    """Whether `model`'s provider caches a prompt only up to the `cache_control` marks in it
    (Anthropic-style), as litellm's model map and provider routing say."""
    import_litellm()
    from litellm.llms.anthropic.common_utils import supports_anthropic_cache_control

    try:
        return bool(supports_anthropic_cache_control(model, None))
    except Exception:  # noqa: BLE001 - an unknown model gets no marks
        return False


def with_cache_marks(messages: list[Message]) -> list[Message]:
    """`messages` (never modified) with cache breakpoints at the end of the system prompt, which
    with the tools before it is the same in every turn and round, and at the end of the last
    message, so the next turn reads the conversation so far from the cache."""
    marked = list(messages)
    last = len(marked) - 1
    for index in {0 if marked and marked[0].get("role") == "system" else last, last}:
        if index >= 0:
            marked[index] = _marked(marked[index])
    return marked


def _marked(message: Message) -> Message:
    content = message.get("content")
    if isinstance(content, str) and content:
        return {**message, "content": [{"type": "text", "text": content, "cache_control": CACHE_MARK}]}
    if isinstance(content, list) and content and isinstance(content[-1], dict):
        return {**message, "content": [*content[:-1], {**content[-1], "cache_control": CACHE_MARK}]}
    return message


def to_reply(response: Any, litellm: Any, scrub_text: Scrubber) -> Reply:
    """A litellm response as a Reply: secrets scrubbed, tool-call arguments parsed (None when
    they are not a JSON object), usage and cost counted as one call."""
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
        calls.append(
            ToolCall(
                id=call.id or f"call_{index}", name=call.function.name or "", arguments=arguments, raw_arguments=raw
            )
        )
    usage = getattr(response, "usage", None)
    return Reply(
        content=scrub_text(message.content) if isinstance(message.content, str) else message.content,
        tool_calls=calls,
        usage=Usage(
            calls=1,
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            cost_usd=_cost(response, litellm),
            cached_tokens=cached_tokens(usage),
        ),
    )


def cached_tokens(usage: Any) -> int:
    """Prompt tokens read from the provider's prompt cache: OpenAI-style servers report them as
    `prompt_tokens_details.cached_tokens`, Anthropic as `cache_read_input_tokens`."""
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    return int(cached or getattr(usage, "cache_read_input_tokens", 0) or 0)


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
