"""Scorers for QA predictions: the registered ones (`core.parts.SCORER`: exact, contains, numeric,
regex and plugins'), or a function named `module:function`."""

from __future__ import annotations

import importlib
import re
import string
from collections.abc import Callable

from ..core.errors import BenchmarkError, ConfigError
from ..core.parts import SCORER
from .base import SCORERS

Scorer = Callable[[str | None, str], float]


def normalize(text: str) -> str:
    """Lowercase, drop punctuation and articles, collapse white space (SQuAD-style)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in string.punctuation)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


@SCORER.builtin
class Exact:
    """The prediction is the answer, both normalised (case, punctuation, articles, white space)."""

    @staticmethod
    def score(prediction: str | None, answer: str) -> float:
        return float(prediction is not None and normalize(prediction) == normalize(answer))


@SCORER.builtin
class Contains:
    """The normalised answer appears in the normalised prediction."""

    @staticmethod
    def score(prediction: str | None, answer: str) -> float:
        return float(prediction is not None and normalize(answer) in normalize(prediction))


@SCORER.builtin
class Numeric:
    """The first number in the prediction equals the answer's (thousands separators allowed)."""

    @staticmethod
    def score(prediction: str | None, answer: str) -> float:
        got, want = _number(prediction), _number(answer)
        return float(got is not None and want is not None and abs(got - want) <= 1e-6 * max(1.0, abs(want)))


def _number(text: str | None) -> float | None:
    match = re.search(r"-?\d[\d,]*(?:\.\d+)?", text or "")
    return float(match.group().replace(",", "")) if match else None


@SCORER.builtin
class Regex:
    """The answer is a regular expression the whole prediction matches (any case)."""

    @staticmethod
    def score(prediction: str | None, answer: str) -> float:
        return float(
            prediction is not None and re.fullmatch(answer, prediction.strip(), re.IGNORECASE | re.DOTALL) is not None
        )


exact, contains, numeric, regex = Exact.score, Contains.score, Numeric.score, Regex.score


def get_scorer(spec: str) -> Scorer:
    """The scorer `spec` names: a registered scorer (built-in or a plugin's) or `module:function`."""
    if spec in SCORER.names():
        try:
            return SCORERS.load(spec)().score
        except ConfigError as exc:
            raise BenchmarkError(str(exc)) from exc
    module_name, _, function_name = spec.partition(":")
    if not function_name:
        raise BenchmarkError(f"unknown scorer {spec!r}: use {', '.join(SCORER.names())} or module:function")
    try:
        scorer: Scorer = getattr(importlib.import_module(module_name), function_name)
    except (ImportError, AttributeError) as exc:
        raise BenchmarkError(f"cannot load scorer {spec!r}: {exc}") from exc
    if not callable(scorer):
        raise BenchmarkError(f"scorer {spec!r} is not a function taking (prediction, answer)")
    return scorer
