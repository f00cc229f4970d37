"""litellm, the library every model call goes through: the only module that imports it, and
only when a model is first called (its import alone costs seconds, which `status`, `log` and
`prompt` never pay). Its responses are read back here as `Reply`s with their cost."""

from __future__ import annotations

import json
import os
from typing import Any

from ..core.redact import Scrubber
from ..store.traces import Usage
from .chat import Reply, ToolCall


def import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


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
        calls.append(ToolCall(id=call.id or f"call_{index}", name=call.function.name or "", arguments=arguments,
                              raw_arguments=raw))
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
