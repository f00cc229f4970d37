"""`gate.cost`: the gate weighing what a candidate costs per val task beside its score.

The policy judges the score as always; this turns its verdict with the cost test:

- `tiebreak`: a rejected candidate is accepted when it is not worse than main (`paired`,
  `sequential` and other policies with a confidence level: the one-sided lower bound of the score
  gain is above -`noninferiority`; the others: equal means) and its per-task cost is shown below
  (1 - `cost_margin`) times main's. Such a merge needs both tests to pass (an intersection-union
  test, each at the level given); the policy's own route to a merge and this one share the
  gate's significance level, half each (`gate_policies.policy_confidence`).
- `bound`: an accepted candidate is rejected unless its per-task cost is shown below (1 +
  `max_cost_increase`) times main's; both tests at the gate's level (intersection-union again).

The cost test is a one-sided sign-flip permutation test of the mean of `candidate - limit *
main` over the tasks costed on both sides, as `paired` tests graded scores; with none, or no
task differing, nothing is shown. A pure function of both sides' per-task results and the
settings its trailers record, so `audit` recomputes it.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..contracts.gate import CostCheck, Verdict
from ..store.evaluations import Evaluation
from ..store.trailers import Decision
from .gate_policies import gain_floor, gate_policy, paired, policy_confidence, sign_flip_p
from .settings import CostRule, CostUnit, GateSettings


def cost_limit(settings: GateSettings) -> float:
    """The ratio to main's cost the candidate's must be shown below."""
    return 1 - settings.cost_margin if settings.cost is CostRule.TIEBREAK else 1 + settings.max_cost_increase


def costed_pairs(candidate: Evaluation, incumbent: Evaluation, unit: CostUnit) -> list[tuple[str, float, float]]:
    """`(task, candidate cost, main cost)` of the tasks scored and costed on both sides."""
    mine, theirs = candidate.costs(unit), incumbent.costs(unit)
    tasks = [task for task, _, _ in paired(candidate, incumbent) if task in mine and task in theirs]
    return [(task, mine[task], theirs[task]) for task in tasks]


def below_p_value(pairs: list[tuple[str, float, float]], limit: float, seed: int = 0) -> float:
    """One-sided p-value of "the candidate's mean cost is at least `limit` times main's" by a
    sign-flip permutation test of `candidate - limit * main`; 1 when no task differs from it."""
    excess = [c - limit * i for _, c, i in pairs]
    if not any(excess):
        return 1.0
    return sign_flip_p(excess, "less", seed)


def check_cost(
    settings: GateSettings, candidate: Evaluation, incumbent: Evaluation, floor: float | None = None
) -> CostCheck:
    pairs = costed_pairs(candidate, incumbent, settings.cost_unit)
    confidence, limit = policy_confidence(settings), cost_limit(settings)
    p = below_p_value(pairs, limit, settings.seed)
    means = (0.0, 0.0)
    if pairs:
        means = (math.fsum(c for _, c, _ in pairs) / len(pairs), math.fsum(i for _, _, i in pairs) / len(pairs))
    return CostCheck(
        settings.cost,
        settings.cost_unit,
        len(pairs),
        *means,
        limit,
        p,
        confidence,
        p < 1 - confidence,
        floor,
        settings.noninferiority if settings.cost is CostRule.TIEBREAK else 0.0,
    )


def weigh_cost(settings: GateSettings, verdict: Verdict, candidate: Evaluation, incumbent: Evaluation) -> Verdict:
    """The policy's verdict turned by `gate.cost` (unchanged under `ignore`)."""
    if settings.cost is CostRule.IGNORE:
        return verdict
    if settings.cost is CostRule.BOUND:
        check = check_cost(settings, candidate, incumbent)
        if verdict.decision != Decision.ACCEPTED or check.passed:
            return _with(verdict, check)
        check = replace(check, decided=True)
        return _with(verdict, check, Decision.REJECTED, f"{verdict.reason}; but its cost is {check.text()}")
    floor = _floor(settings, verdict, candidate, incumbent)
    check = check_cost(settings, candidate, incumbent, floor)
    if verdict.decision == Decision.ACCEPTED:
        return _with(verdict, check)
    worse = _worse(settings, verdict, floor)
    if worse is not None or not check.passed:
        why = worse or f"its cost is {check.text()}"
        return _with(verdict, check, reason=f"{verdict.reason}; no cost tiebreak: {why}")
    check = replace(check, decided=True)
    not_worse = (
        "equal means"
        if floor is None
        else f"score gain >= {floor:+.4f} > -{settings.noninferiority:g} at {check.confidence:g}"
    )
    reason = f"{verdict.reason}; accepted as cheaper: {not_worse}, {check.text()}"
    return _with(verdict, check, Decision.ACCEPTED, reason)


def _floor(settings: GateSettings, verdict: Verdict, candidate: Evaluation, incumbent: Evaluation) -> float | None:
    """The non-inferiority bound of a policy with a confidence level; None for one without."""
    if verdict.evidence.confidence is None:
        return None
    return gain_floor(paired(candidate, incumbent), policy_confidence(settings), settings.seed)


def _worse(settings: GateSettings, verdict: Verdict, floor: float | None) -> str | None:
    """Why the candidate cannot be called no worse than main; None when it can."""
    evidence = verdict.evidence
    if floor is None:
        if evidence.gain != 0:
            return f"its mean differs from main's ({evidence.mean_diff:+.4f}; needs equal means)"
        return gate_policy(settings).tie_problem(evidence)
    if not floor > -settings.noninferiority:
        return (
            f"score gain's lower bound {floor:+.4f} at {policy_confidence(settings):g} is not above "
            f"-{settings.noninferiority:g}"
        )
    return None


def _with(verdict: Verdict, check: CostCheck, decision: Decision | None = None, reason: str | None = None) -> Verdict:
    return Verdict(decision or verdict.decision, reason or verdict.reason, replace(verdict.evidence, cost=check))
