"""Gate policies: how much evidence a candidate's validation must show to be merged. Each is a
class following `contracts.gate.GatePolicy`, registered by its name in `core.parts.GATE_POLICY`.

Every policy compares two evaluations of the same setup (the same tasks, agent, seeds, prompts)
that differ in the skills alone, task by task. `strict` is the paper's rule; the others ask for
more evidence than a bare difference of means, which on a few dozen tasks is mostly noise.

Verdicts rest on the per-task differences summed exactly, as fractions of the decimals the scores
are written as: in floating point 0.1 + 0.2 + 0.4 is 0.7000000000000001 but 0.1 + 0.3 + 0.3 is
0.7, and a sum depends on the order of its terms, so a tie could pass as a gain by a rounding error.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from fractions import Fraction
from typing import ClassVar, Literal

from ..contracts.gate import GATE_POLICIES, BasePolicy, Evidence, GatePolicy, Look, ValidationPlan, Verdict
from ..core.errors import WikiskillError
from ..core.parts import GATE_POLICY
from ..store.evaluations import Evaluation
from ..store.trailers import Decision
from .settings import CostRule, GateSettings

MAX_REASONS_SHOWN = 10
"""The most infrastructure failures whose reasons a stopping message names (each task's outcome
file keeps every reason)."""
MAX_REASON_CHARS = 300


def paired(candidate: Evaluation, incumbent: Evaluation) -> list[tuple[str, float, float]]:
    """`(task, candidate score, incumbent score)` per task scored on both sides, in the
    candidate's order; both must cover the same tasks. A task that is an infrastructure failure
    on either side is left out on both (`left_out`)."""
    if set(candidate.tasks) != set(incumbent.tasks):
        raise WikiskillError(
            "the gate can only compare evaluations of the same tasks "
            f"({candidate.size} and {incumbent.size} tasks, not the same ids)"
        )
    return [
        (task, candidate.scores[task], incumbent.scores[task])
        for task in candidate.tasks
        if task in candidate.scores and task in incumbent.scores
    ]


def left_out(candidate: Evaluation, incumbent: Evaluation | None = None) -> dict[str, str]:
    """The tasks an infrastructure failure on either side leaves out of the comparison, in the
    candidate's order, each with its reason (and the side it failed on)."""
    sides = [("candidate", candidate), ("main", incumbent)] if incumbent is not None else [("", candidate)]
    reasons = {}
    for task in candidate.tasks:
        found = [
            f"{side + ': ' if side else ''}{evaluation.infra[task]}"
            for side, evaluation in sides
            if evaluation is not None and task in evaluation.infra
        ]
        if found:
            reasons[task] = "; ".join(found)
    return reasons


def infra_problem(settings: GateSettings, candidate: Evaluation, incumbent: Evaluation | None = None) -> str | None:
    """Why a validation is indecisive: more than `gate.max_infra_share` of its tasks failed as
    infrastructure, on either side, with each such task's reason; None when the comparison can stand."""
    dropped = left_out(candidate, incumbent)
    if not candidate.size or len(dropped) <= settings.max_infra_share * candidate.size:
        return None
    shown = [f"{task}: {_cut(reason)}" for task, reason in list(dropped.items())[:MAX_REASONS_SHOWN]]
    more = len(dropped) - len(shown)
    return (
        f"{len(dropped)} of {candidate.size} tasks failed as infrastructure, more than gate.max_infra_share "
        f"{settings.max_infra_share:g} ({'; '.join(shown)}{f'; and {more} more' if more > 0 else ''})"
    )


def _cut(reason: str) -> str:
    return reason if len(reason) <= MAX_REASON_CHARS else reason[: MAX_REASON_CHARS - 3] + "..."


def decimal(value: float) -> Fraction:
    """`value` as the decimal it is written as (its shortest repr, as in the outcomes files)."""
    return Fraction(repr(value))


def differences(pairs: Iterable[tuple[str, float, float]], less: float = 0.0) -> list[Fraction]:
    """Each task's exact difference, candidate minus incumbent, minus `less`."""
    return [decimal(c) - decimal(i) - decimal(less) for _, c, i in pairs]


def evidence_of(
    policy: str,
    candidate: Evaluation,
    incumbent: Evaluation,
    *,
    interval: tuple[float, float] | None = None,
    confidence: float | None = None,
    p_value: float | None = None,
    look: Look | None = None,
) -> Evidence:
    """The comparison on the tasks scored on both sides: their means, the exact mean gain."""
    pairs = paired(candidate, incumbent)
    gain = sum(differences(pairs), Fraction(0)) / max(len(pairs), 1)
    dropped = left_out(candidate, incumbent)
    means = (candidate.mean, incumbent.mean)
    if dropped:
        means = (
            (math.fsum(c for _, c, _ in pairs) / len(pairs), math.fsum(i for _, _, i in pairs) / len(pairs))
            if pairs
            else (0.0, 0.0)
        )
    return Evidence(
        policy,
        len(pairs),
        *means,
        gain,
        fixed=[task for task, c, i in pairs if c >= 1.0 > i],
        broken=[task for task, c, i in pairs if i >= 1.0 > c],
        helped=[task for task, c, i in pairs if c > i],
        hurt=[task for task, c, i in pairs if c < i],
        left_out=dropped,
        interval=interval,
        confidence=confidence,
        p_value=p_value,
        look=look,
    )


def _strict_reason(evidence: Evidence, at_least: bool) -> tuple[bool, str]:
    c, i, gain = evidence.candidate, evidence.incumbent, evidence.gain
    shown = f"val {c:.3f} {'>' if gain > 0 else '=' if gain == 0 else '<'} incumbent {i:.3f}"
    if gain and f"{c:.3f}" == f"{i:.3f}":
        shown += f" (mean difference {float(gain):+.2g})"
    if gain > 0 or (at_least and gain == 0):
        return True, shown
    needs = "at least the incumbent" if at_least else "a strict improvement"
    return False, f"{shown} (needs {needs})"


def verdict_of(passed: bool, reason: str, evidence: Evidence) -> Verdict:
    return Verdict(Decision.ACCEPTED if passed else Decision.REJECTED, reason, evidence)


@GATE_POLICY.builtin
class StrictPolicy(BasePolicy):
    """Accept iff the candidate's mean is greater than the incumbent's (the paper's rule)."""

    name: ClassVar[str]

    @classmethod
    def from_settings(cls, settings: GateSettings) -> StrictPolicy:
        return cls()

    def plan(self) -> ValidationPlan:
        return ValidationPlan()

    def judge(self, candidate: Evaluation, incumbent: Evaluation, at_least: bool = False) -> Verdict:
        evidence = evidence_of(self.name, candidate, incumbent)
        return verdict_of(*_strict_reason(evidence, at_least), evidence)


@GATE_POLICY.builtin
class ConfirmPolicy(StrictPolicy):
    """Strict, twice: once on the validation, once more on a fresh evaluation with new seeds."""

    name: ClassVar[str]

    def plan(self) -> ValidationPlan:
        return ValidationPlan(confirms=True)


@GATE_POLICY.builtin
class NoRegressionPolicy(BasePolicy):
    """Strict, and the candidate loses at most `max_broken` tasks that the incumbent solved."""

    name: ClassVar[str]

    def __init__(self, max_broken: int):
        self.max_broken = max_broken

    @classmethod
    def from_settings(cls, settings: GateSettings) -> NoRegressionPolicy:
        return cls(settings.max_broken)

    def plan(self) -> ValidationPlan:
        return ValidationPlan()

    def judge(self, candidate: Evaluation, incumbent: Evaluation, at_least: bool = False) -> Verdict:
        evidence = evidence_of(self.name, candidate, incumbent)
        passed, reason = _strict_reason(evidence, at_least)
        if passed and len(evidence.broken) > self.max_broken:
            shown = ", ".join(evidence.broken[:5]) + (" …" if len(evidence.broken) > 5 else "")
            return verdict_of(
                False,
                f"{reason}, but {len(evidence.broken)} task(s) main solved are lost "
                f"(at most {self.max_broken}): {shown}",
                evidence,
            )
        return verdict_of(passed, reason, evidence)

    def tie_problem(self, evidence: Evidence) -> str | None:
        if len(evidence.broken) > self.max_broken:
            return f"{len(evidence.broken)} task(s) main solved are lost (at most {self.max_broken})"
        return None


@GATE_POLICY.builtin
class PairedPolicy(BasePolicy):
    """Accept iff the tasks show, at `confidence`, a mean per-task gain above `margin`: the lower
    bound of a one-sided confidence interval of the gain is above `margin`, and a test rejects
    "the gain is at most `margin`".

    Pass/fail scores: an exact one-sided binomial test on the discordant tasks with its exact
    (Clopper-Pearson) bound; with `margin` 0 this is McNemar's exact sign test. Other scores: a
    one-sided BCa bootstrap bound and a paired sign-flip permutation test (the bootstrap alone is
    too lenient on few tasks; `benchmarks/perf/gate_noise.py` measures both).
    """

    name: ClassVar[str]
    has_level: ClassVar[bool] = True

    def __init__(self, confidence: float, margin: float, seed: int = 0):
        self.confidence, self.margin, self.seed = confidence, margin, seed

    @classmethod
    def from_settings(cls, settings: GateSettings) -> PairedPolicy:
        return cls(settings.confidence, settings.margin, settings.seed)

    def plan(self) -> ValidationPlan:
        return ValidationPlan()

    @property
    def alpha(self) -> float:
        return 1 - self.confidence

    def judge(self, candidate: Evaluation, incumbent: Evaluation, at_least: bool = False) -> Verdict:
        pairs = paired(candidate, incumbent)
        if at_least:  # removing prompt text needs no evidence of a gain, only of no loss
            evidence = evidence_of(self.name, candidate, incumbent)
            return verdict_of(*_strict_reason(evidence, True), evidence)
        if all(score in (0.0, 1.0) for _, c, i in pairs for score in (c, i)):
            return self._sign_test(candidate, incumbent)
        return self._bootstrap(candidate, incumbent, pairs)

    def _sign_test(self, candidate: Evaluation, incumbent: Evaluation) -> Verdict:
        """Given the k discordant tasks, the gain is k/n * (2q - 1) with q the chance that a
        discordant task is a fixed one; "gain at most margin" is "q at most q0"."""
        from scipy.stats import binomtest

        evidence = evidence_of(self.name, candidate, incumbent)
        fixed, broken = len(evidence.fixed), len(evidence.broken)
        discordant, n = fixed + broken, evidence.n
        q0 = (1 + self.margin * n / discordant) / 2 if discordant else 1.0
        p = float(binomtest(fixed, discordant, q0, alternative="greater").pvalue) if q0 < 1 else 1.0
        low = gain_floor(paired(candidate, incumbent), self.confidence)
        evidence = replace(evidence, interval=(low, math.inf), p_value=p, confidence=self.confidence)
        reason = (
            f"val {candidate.mean:.3f} vs incumbent {incumbent.mean:.3f}: {fixed} fixed, {broken} broken, "
            f"gain {evidence.interval_text()}, sign test p={p:.4f}"
        )
        return self._decide(reason, evidence, low, p)

    def _bootstrap(
        self, candidate: Evaluation, incumbent: Evaluation, pairs: list[tuple[str, float, float]]
    ) -> Verdict:
        excess = [float(d) for d in differences(pairs, less=self.margin)]
        moved = sum(1 for d in excess if d)
        if 0.5**moved >= self.alpha:  # the sign-flip test's smallest p-value is 2^-moved
            evidence = evidence_of(self.name, candidate, incumbent, confidence=self.confidence)
            return verdict_of(
                False,
                f"val {candidate.mean:.3f} vs incumbent {incumbent.mean:.3f}: {moved} of "
                f"{evidence.n} task(s) differ from a gain of {self.margin:g}: too few to show a "
                f"gain above it at {self.confidence:g} (a sign-flip test's p cannot go below "
                f"{0.5**moved:.4f})",
                evidence,
            )
        low = mean_interval([float(d) for d in differences(pairs)], self.confidence, self.seed, one_sided=True)[0]
        p = self._sign_flip_p(excess)
        evidence = evidence_of(
            self.name, candidate, incumbent, interval=(low, math.inf), confidence=self.confidence, p_value=p
        )
        reason = (
            f"val {candidate.mean:.3f} vs incumbent {incumbent.mean:.3f}: mean difference "
            f"{evidence.mean_diff:+.4f}, {evidence.interval_text()}, sign-flip p={p:.4f}"
        )
        return self._decide(reason, evidence, low, p)

    def _decide(self, reason: str, evidence: Evidence, low: float, p: float) -> Verdict:
        if low > self.margin and p < self.alpha:
            return verdict_of(True, f"{reason}: above {self.margin:g}", evidence)
        return verdict_of(
            False, f"{reason} (needs the lower bound above {self.margin:g} and p < {self.alpha:g})", evidence
        )

    def _sign_flip_p(self, diffs: list[float]) -> float:
        """One-sided p-value of "the mean difference is above 0" by a paired permutation (sign-flip)
        test: exact at up to 13 tasks, where a bootstrap interval alone accepts too often."""
        return sign_flip_p(diffs, "greater", self.seed)


def sign_flip_p(values: list[float], alternative: Literal["greater", "less"], seed: int = 0) -> float:
    """One-sided p-value of "the mean of `values` is above 0" (`greater`) or "below 0" (`less`)
    by a sign-flip permutation test, the paired test every gate rule uses."""
    import numpy as np
    from scipy.stats import permutation_test

    result = permutation_test(
        (np.asarray(values),),
        np.mean,
        permutation_type="samples",
        alternative=alternative,
        n_resamples=9999,
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    return float(result.pvalue)


def gain_floor(pairs: list[tuple[str, float, float]], confidence: float, seed: int = 0) -> float:
    """The one-sided lower `confidence` bound of the mean per-task gain: on pass/fail scores the
    exact (Clopper-Pearson) bound of the sign test on the discordant tasks, on other scores the
    BCa bootstrap one; -inf with no task."""
    if not pairs:
        return -math.inf
    if all(score in (0.0, 1.0) for _, c, i in pairs for score in (c, i)):
        from scipy.stats import beta

        fixed = sum(1 for _, c, i in pairs if c > i)
        broken = sum(1 for _, c, i in pairs if c < i)
        q_low = float(beta.ppf(1 - confidence, fixed, broken + 1)) if fixed else 0.0
        return (fixed + broken) / len(pairs) * (2 * q_low - 1) if fixed + broken else 0.0
    return mean_interval([float(d) for d in differences(pairs)], confidence, seed, one_sided=True)[0]


def mean_interval(diffs: list[float], confidence: float, seed: int = 0, one_sided: bool = False) -> tuple[float, float]:
    """BCa bootstrap confidence interval of the mean of paired differences (one-sided: the upper
    end is +inf). With no variation the interval is the point; a bound the bootstrap cannot
    estimate is infinite, so it never passes a check by accident."""
    import numpy as np
    from scipy.stats import bootstrap

    if not diffs:
        return (-math.inf, math.inf)
    if len(set(diffs)) == 1:
        return (diffs[0], math.inf if one_sided else diffs[0])
    result = bootstrap(
        (np.asarray(diffs),),
        np.mean,
        confidence_level=confidence,
        alternative="greater" if one_sided else "two-sided",
        method="BCa",
        n_resamples=9999,
        rng=np.random.default_rng(seed),
    )
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    return (low if math.isfinite(low) else -math.inf, high if math.isfinite(high) and not one_sided else math.inf)


def gate_policy(settings: GateSettings) -> GatePolicy:
    """The policy `gate.policy` names, configured by the rest of the `gate` section; under
    `gate.cost: tiebreak` at half the significance level (the other half is the tiebreak's)."""
    policy = GATE_POLICIES.load(settings.policy)
    return policy.from_settings(settings.model_copy(update={"confidence": policy_confidence(settings)}))


def policy_confidence(settings: GateSettings) -> float:
    """The confidence the policy's own test runs at (`gate.confidence`, split under `tiebreak`)."""
    return split_confidence(settings.confidence) if settings.cost is CostRule.TIEBREAK else settings.confidence


def split_confidence(confidence: float) -> float:
    """The confidence of each of two routes to a merge that share a significance level."""
    return round(1 - (1 - confidence) / 2, 12)
