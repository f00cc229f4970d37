"""JSON objects found in model text: plain, in ```json fences, in tags, or surrounded by prose.

Hostile text may hold thousands of `{`: every search here is bounded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
MAX_DECODE_ATTEMPTS = 50


def json_objects(text: str) -> Iterator[Any]:
    """Every top-level JSON value that starts with `{` in `text`, in order (nested ones are part
    of their outer object); raises ValueError with the last parse error when none decodes."""
    decoder = json.JSONDecoder(strict=False)  # models often put raw newlines inside strings
    error = "no JSON object found"
    found = False
    start = text.find("{")
    attempts = 0
    while start != -1 and attempts < MAX_DECODE_ATTEMPTS:
        attempts += 1
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            error = f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            start = text.find("{", start + 1)
            continue
        except RecursionError:
            raise ValueError("the JSON is nested too deeply") from None
        found = True
        yield value
        start = text.find("{", end)
    if not found:
        raise ValueError(error)


def extract_json(text: str | None) -> Any:
    """The first JSON object in model text, preferring a fenced one to one in the prose around it.

    Raises ValueError with the parse error, which the caller can send back to the model.
    """
    if not text or not text.strip():
        raise ValueError("the reply is empty; expected one JSON object")
    error = "no JSON object found"
    for candidate in [match.group(1) for match in _FENCE.finditer(text)] + [text]:
        try:
            return next(json_objects(candidate))
        except ValueError as exc:
            error = str(exc)
    raise ValueError(error)
