"""Scorers for QA predictions: exact (normalised), numeric, contains, regex, or module:function."""

from __future__ import annotations

import importlib
import re
import string
from collections.abc import Callable

from ..core.errors import BenchmarkError

Scorer = Callable[[str | None, str], float]


def normalize(text: str) -> str:
    """Lowercase, drop punctuation and articles, collapse white space (SQuAD-style)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in string.punctuation)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def exact(prediction: str | None, answer: str) -> float:
    return float(prediction is not None and normalize(prediction) == normalize(answer))


def contains(prediction: str | None, answer: str) -> float:
    return float(prediction is not None and normalize(answer) in normalize(prediction))


def numeric(prediction: str | None, answer: str) -> float:
    def number(text: str | None) -> float | None:
        match = re.search(r"-?\d[\d,]*(?:\.\d+)?", text or "")
        return float(match.group().replace(",", "")) if match else None

    got, want = number(prediction), number(answer)
    return float(got is not None and want is not None and abs(got - want) <= 1e-6 * max(1.0, abs(want)))


def regex(prediction: str | None, answer: str) -> float:
    return float(
        prediction is not None and re.fullmatch(answer, prediction.strip(), re.IGNORECASE | re.DOTALL) is not None
    )


BUILTIN: dict[str, Scorer] = {"exact": exact, "contains": contains, "numeric": numeric, "regex": regex}


def get_scorer(spec: str) -> Scorer:
    if spec in BUILTIN:
        return BUILTIN[spec]
    module_name, _, function_name = spec.partition(":")
    if not function_name:
        raise BenchmarkError(f"unknown scorer {spec!r}: use {', '.join(BUILTIN)} or module:function")
    try:
        scorer = getattr(importlib.import_module(module_name), function_name)
    except (ImportError, AttributeError) as exc:
        raise BenchmarkError(f"cannot load scorer {spec!r}: {exc}") from exc
    if not callable(scorer):
        raise BenchmarkError(f"scorer {spec!r} is not a function taking (prediction, answer)")
    return scorer
