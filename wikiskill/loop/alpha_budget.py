"""`gate.alpha_budget`: one family-wise error for a workspace's whole run, spent round by round.

Every validation the gate judges is a test of "this change does nothing" on the same val pool; at
a 5% level per round, twenty rounds of changes that do nothing merge at least one about 64% of
the time. With a budget the k-th verdict runs at level alpha_k of the online fallback procedure
(Tian and Ramdas, "Online control of the familywise error rate", 2021):

    alpha_k = budget * gamma_k + (alpha_{k-1} if verdict k-1 merged else 0)

with gamma_k = 0.9 / R for the first R = `gate.alpha_rounds` verdicts and 0.1 * 2^-(k - R) after
(the spending sums to 1, so no run can spend more than the budget). A merge passes its level on to
the next verdict: the fallback procedure is a Bonferroni-based closed test, so it bounds the
chance of any false merge by the budget whatever the dependence between rounds (they share the
val pool and main's evaluation). Only verdicts on a validation spend: a round that proposes
nothing or an invalid change tests nothing.

Each gate verdict's commit records `Alpha` (its level), `Alpha-Spent` and `Alpha-Left` (of the
budget, after it); `audit` replays the ledger from those commits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..store.reads import Commit, WorkspaceReads
from ..store.trailers import Decision, Step, Trailers
from ..store.workspace import MAIN
from .settings import GateSettings

FIRST_SHARE = 0.9
"""The share of the budget spread evenly over the first `gate.alpha_rounds` verdicts."""


@dataclass(frozen=True)
class Spend:
    """One verdict's share of the budget."""

    number: int
    """The verdict's place among those that spend (1, 2, ...)."""
    alpha: float
    """The significance level the verdict runs at."""
    spent: float
    """Of the budget, spent by this verdict and those before it."""
    left: float

    def trailers(self) -> dict[str, float]:
        return {"alpha": self.alpha, "alpha_spent": self.spent, "alpha_left": self.left}


def spending(k: int, rounds: int) -> float:
    """gamma_k: the share of the budget the k-th verdict spends."""
    return FIRST_SHARE / rounds if k <= rounds else (1 - FIRST_SHARE) * 0.5 ** (k - rounds)


def next_spend(budget: float, rounds: int, before: list[tuple[float, bool]]) -> Spend:
    """The spend of the verdict after `before`, each `(its level, whether it merged)`."""
    k = len(before) + 1
    carried = before[-1][0] if before and before[-1][1] else 0.0
    spent = budget * math.fsum(spending(j, rounds) for j in range(1, k + 1))
    return Spend(k, budget * spending(k, rounds) + carried, spent, max(budget - spent, 0.0))


def spends(ws: WorkspaceReads, ref: str = MAIN) -> list[Commit]:
    """The gate commits of `ref` that spent some of the budget, oldest first."""
    return [c for c in reversed(ws.log(ref)) if c.meta.step == Step.GATE and c.meta.alpha is not None]


def ledger(ws: WorkspaceReads, ref: str = MAIN) -> list[tuple[float, bool]]:
    return [(c.meta.alpha or 0.0, c.meta.decision == Decision.ACCEPTED) for c in spends(ws, ref)]


def current_spend(ws: WorkspaceReads, settings: GateSettings) -> Spend | None:
    """The level the next verdict on main runs at; None without `gate.alpha_budget`."""
    if settings.alpha_budget is None:
        return None
    return next_spend(settings.alpha_budget, settings.alpha_rounds, ledger(ws))


def budgeted(settings: GateSettings, spend: Spend | None) -> GateSettings:
    """The gate settings a verdict runs under: `confidence` 1 - its level under a budget."""
    if spend is None:
        return settings
    return settings.model_copy(update={"confidence": round(1 - spend.alpha, 12)})


def ledger_problems(ws: WorkspaceReads, settings: GateSettings) -> list[str]:
    """Replay the budget over main's gate commits: each level is the rule's, given the verdicts
    before it, and a merge's evidence is at that level."""
    problems: list[str] = []
    before: list[tuple[float, bool]] = []
    for commit in spends(ws):
        meta = commit.meta
        label = f"round {meta.round} ({commit.sha[:10]})"
        budget = settings.alpha_budget or (meta.alpha_spent or 0.0) + (meta.alpha_left or 0.0)
        expected = next_spend(budget, settings.alpha_rounds, before)
        if abs(expected.alpha - (meta.alpha or 0.0)) > 1e-6 or abs(expected.spent - (meta.alpha_spent or 0.0)) > 1e-6:
            problems.append(
                f"{label}: records alpha {meta.alpha:.6f} (spent {meta.alpha_spent or 0.0:.6f}); the budget "
                f"{budget:g} over the verdicts before it gives {expected.alpha:.6f} (spent {expected.spent:.6f})"
            )
        merged = meta.decision == Decision.ACCEPTED
        if merged and not meta.cost_decided:
            problems += [f"{label}: {problem}" for problem in _level_problems(meta, expected.alpha)]
        before.append((meta.alpha or 0.0, merged))
    return problems


def _level_problems(meta: Trailers, alpha: float) -> list[str]:
    """A merge's evidence is at its level: a sequential design built at confidence 1 - alpha or
    above, a fixed-n test's p-value below alpha."""
    if meta.confidence is not None and meta.confidence < 1 - alpha - 1e-9:
        return [f"merged at confidence {meta.confidence:g}, below its budget's {1 - alpha:g}"]
    if meta.look is None and meta.p_value is not None and meta.p_value >= alpha:
        return [f"merged with p={meta.p_value:.4f}, not below its level {alpha:.6f}"]
    return []
