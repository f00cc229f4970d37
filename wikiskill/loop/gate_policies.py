"""Gate policies: how much evidence a candidate's validation must show to be merged.

Every policy compares two evaluations of the same setup (the same tasks, agent, seeds, prompts)
that differ in the skills alone, task by task. `strict` is the paper's rule; the others ask for
more evidence than a bare difference of means, which on a few dozen tasks is mostly noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import ClassVar, Protocol

from ..core.config import GateSettings
from ..core.errors import WikiskillError
from ..store.evaluations import Evaluation
from ..store.trailers import Decision


RETIRE = "retire"
"""The proposal action that removes a skill: a smaller prompt at an equal score is a gain, so it
passes when the candidate scores at least the incumbent (the one exception to strictness)."""


@dataclass(frozen=True)
class Evidence:
    """What a verdict rests on; written to the gate commit and the skill-impact entry."""

    policy: str
    n: int
    candidate: float
    incumbent: float
    fixed: list[str] = field(default_factory=list)
    """Tasks the candidate solves that the incumbent did not."""
    broken: list[str] = field(default_factory=list)
    """Tasks the incumbent solved that the candidate does not."""
    interval: tuple[float, float] | None = None
    """One-sided confidence interval of the mean per-task difference (upper end +inf)."""
    confidence: float | None = None
    p_value: float | None = None

    @property
    def mean_diff(self) -> float:
        return self.candidate - self.incumbent

    def interval_text(self) -> str | None:
        if self.interval is None:
            return None
        return f"[{self.interval[0]:+.4f}, +inf) at {self.confidence:g}"


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    reason: str
    evidence: Evidence


class GatePolicy(Protocol):
    name: ClassVar[str]
    confirms: ClassVar[bool]
    """Whether a candidate that passes is evaluated once more and must pass again."""

    def judge(self, candidate: Evaluation, incumbent: Evaluation, at_least: bool = False) -> Verdict:
        """`at_least`: a tie passes too (a change that only removes prompt text)."""


def paired(candidate: Evaluation, incumbent: Evaluation) -> list[tuple[str, float, float]]:
    """`(task, candidate score, incumbent score)` per task; both must cover the same tasks."""
    if set(candidate.scores) != set(incumbent.scores):
        raise WikiskillError("the gate can only compare evaluations of the same tasks "
                             f"({candidate.n} and {incumbent.n} tasks, not the same ids)")
    return [(task, score, incumbent.scores[task]) for task, score in candidate.scores.items()]


def _evidence(policy: str, candidate: Evaluation, incumbent: Evaluation, **extra: object) -> Evidence:
    pairs = paired(candidate, incumbent)
    return Evidence(policy, len(pairs), candidate.mean, incumbent.mean,
                    fixed=[task for task, c, i in pairs if c >= 1.0 > i],
                    broken=[task for task, c, i in pairs if i >= 1.0 > c], **extra)  # type: ignore[arg-type]


def _strict_reason(evidence: Evidence, at_least: bool) -> tuple[bool, str]:
    c, i = evidence.candidate, evidence.incumbent
    if c > i or (at_least and c >= i):
        return True, f"val {c:.3f} {'>' if c > i else '='} incumbent {i:.3f}"
    relation = "=" if c == i else "<"
    needs = "at least the incumbent" if at_least else "a strict improvement"
    return False, f"val {c:.3f} {relation} incumbent {i:.3f} (needs {needs})"


def _verdict(passed: bool, reason: str, evidence: Evidence) -> Verdict:
    return Verdict(Decision.ACCEPTED if passed else Decision.REJECTED, reason, evidence)


class StrictPolicy:
    """Accept iff the candidate's mean is greater than the incumbent's (the paper's rule)."""

    name = "strict"
    confirms = False

    def judge(self, candidate: Evaluation, incumbent: Evaluation, at_least: bool = False) -> Verdict:
        evidence = _evidence(self.name, candidate, incumbent)
        return _verdict(*_strict_reason(evidence, at_least), evidence)


class ConfirmPolicy(StrictPolicy):
    """Strict, twice: once on the validation, once more on a fresh evaluation with new seeds."""

    name = "confirm"
    confirms = True


class NoRegressionPolicy:
    """Strict, and the candidate loses at most `max_broken` tasks that the incumbent solved."""

    name = "no_regression"
    confirms = False

    def __init__(self, max_broken: int):
        self.max_broken = max_broken

    def judge(self, candidate: Evaluation, incumbent: Evaluation, at_least: bool = False) -> Verdict:
        evidence = _evidence(self.name, candidate, incumbent)
        passed, reason = _strict_reason(evidence, at_least)
        if passed and len(evidence.broken) > self.max_broken:
            shown = ", ".join(evidence.broken[:5]) + (" …" if len(evidence.broken) > 5 else "")
            return _verdict(False, f"{reason}, but {len(evidence.broken)} task(s) main solved are lost "
                                   f"(at most {self.max_broken}): {shown}", evidence)
        return _verdict(passed, reason, evidence)


class PairedPolicy:
    """Accept iff the per-task paired improvement is significant and above `margin`.

    Pass/fail scores: an exact one-sided sign test on the discordant tasks (McNemar's exact test).
    Other scores: the lower bound of a one-sided BCa bootstrap interval of the mean difference must
    be above the margin, and a paired sign-flip permutation test must reject "no gain" (the
    bootstrap alone is too lenient on few tasks; `benchmarks/perf/gate_noise.py` measures both).
    """

    name = "paired"
    confirms = False

    def __init__(self, confidence: float, margin: float, seed: int = 0):
        self.confidence, self.margin, self.seed = confidence, margin, seed

    def judge(self, candidate: Evaluation, incumbent: Evaluation, at_least: bool = False) -> Verdict:
        pairs = paired(candidate, incumbent)
        if at_least:  # removing prompt text needs no evidence of a gain, only of no loss
            evidence = _evidence(self.name, candidate, incumbent)
            return _verdict(*_strict_reason(evidence, True), evidence)
        if all(score in (0.0, 1.0) for _, c, i in pairs for score in (c, i)):
            return self._sign_test(candidate, incumbent)
        return self._bootstrap(candidate, incumbent, [c - i for _, c, i in pairs])

    def _sign_test(self, candidate: Evaluation, incumbent: Evaluation) -> Verdict:
        from scipy.stats import binomtest

        evidence = _evidence(self.name, candidate, incumbent)
        fixed, broken = len(evidence.fixed), len(evidence.broken)
        p = binomtest(fixed, fixed + broken, 0.5, alternative="greater").pvalue if fixed + broken else 1.0
        evidence = replace(evidence, p_value=float(p), confidence=self.confidence)
        alpha = 1 - self.confidence
        reason = (f"val {candidate.mean:.3f} vs incumbent {incumbent.mean:.3f}: {fixed} fixed, {broken} broken, "
                  f"sign test p={p:.4f}")
        if p >= alpha:
            return _verdict(False, f"{reason} (needs p < {alpha:g})", evidence)
        if evidence.mean_diff <= self.margin:
            return _verdict(False, f"{reason}, but the gain {evidence.mean_diff:+.3f} is not above the margin "
                                   f"{self.margin:g}", evidence)
        return _verdict(True, f"{reason} < {alpha:g}", evidence)

    def _bootstrap(self, candidate: Evaluation, incumbent: Evaluation, diffs: list[float]) -> Verdict:
        low = mean_interval(diffs, self.confidence, self.seed, one_sided=True)[0]
        p = self._sign_flip_p([d - self.margin for d in diffs])
        evidence = _evidence(self.name, candidate, incumbent, interval=(low, math.inf), confidence=self.confidence,
                             p_value=p)
        alpha = 1 - self.confidence
        reason = (f"val {candidate.mean:.3f} vs incumbent {incumbent.mean:.3f}: mean difference "
                  f"{evidence.mean_diff:+.4f}, {evidence.interval_text()}, sign-flip p={p:.4f}")
        if low > self.margin and p < alpha:
            return _verdict(True, f"{reason}: above {self.margin:g}", evidence)
        return _verdict(False, f"{reason} (needs the lower bound above {self.margin:g} and p < {alpha:g})", evidence)

    def _sign_flip_p(self, diffs: list[float]) -> float:
        """One-sided p-value of "the mean difference is above 0" by a paired permutation (sign-flip)
        test: exact when the candidate changes nothing, at any number of tasks, where a bootstrap
        interval alone accepts too often on a few dozen tasks."""
        import numpy as np
        from scipy.stats import permutation_test

        if not any(diffs):
            return 1.0
        result = permutation_test((np.asarray(diffs),), np.mean, permutation_type="samples", alternative="greater",
                                  n_resamples=9999, vectorized=True, rng=np.random.default_rng(self.seed))
        return float(result.pvalue)


def mean_interval(diffs: list[float], confidence: float, seed: int = 0,
                  one_sided: bool = False) -> tuple[float, float]:
    """BCa bootstrap confidence interval of the mean of paired differences (one-sided: the upper
    end is +inf). With no variation the interval is the point; a bound the bootstrap cannot
    estimate is infinite, so it never passes a check by accident."""
    import numpy as np
    from scipy.stats import bootstrap

    if not diffs:
        return (-math.inf, math.inf)
    if len(set(diffs)) == 1:
        return (diffs[0], math.inf if one_sided else diffs[0])
    result = bootstrap((np.asarray(diffs),), np.mean, confidence_level=confidence,
                       alternative="greater" if one_sided else "two-sided", method="BCa", n_resamples=9999,
                       rng=np.random.default_rng(seed))
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    return (low if math.isfinite(low) else -math.inf, high if math.isfinite(high) and not one_sided else math.inf)


def gate_policy(settings: GateSettings) -> GatePolicy:
    if settings.policy == "paired":
        return PairedPolicy(settings.confidence, settings.margin, settings.seed)
    if settings.policy == "no_regression":
        return NoRegressionPolicy(settings.max_broken)
    if settings.policy == "confirm":
        return ConfirmPolicy()
    return StrictPolicy()
