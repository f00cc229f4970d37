"""`gate.policy: sequential`: `paired`'s evidence gathered a batch at a time, stopping as soon as
a group-sequential test can accept the candidate or rule a gain out.

The val split is the pool, in its order; look k uses its first `k * batch` tasks (the last look
all of them). At each look the statistic is the standardised sum of the per-task differences
less the margin, z = S / sqrt(V) with S = sum(d - margin) and V = sum((d - margin)^2): for
pass/fail scores this is the sign test's statistic on the tasks fixed and broken. Under "no
gain" z is about a standard normal at every look, with the correlation of a Brownian motion
observed at the looks' task fractions t_k, which gives the boundaries:

- efficacy (accept when z >= c_k): an alpha-spending boundary (Lan-DeMets, spending alpha *
  t^3, close to O'Brien-Fleming: little power is lost against the fixed-n test), each c_k
  solved so that crossing first at look k has probability alpha * (t_k^3 - t_{k-1}^3);
- futility (reject when z < f_k, not at the last look): the conditional power under the gain
  that the whole pool would show half the time is below 10%, f_k = c_K sqrt(t) - z_0.9
  sqrt((1 - t) / t); it only ever rejects, so it cannot add a false merge;
- the last look gives `paired`'s fixed-n verdict (exact sign test, or bootstrap and sign-flip
  test) at the level the spending left, 1 - Phi(c_K).

The boundaries are rounded outward to 0.001 and compared with z exactly (S^2 against c^2 V, in
fractions), so a verdict is a pure function of the differences and the look; `audit`
recomputes it. `benchmarks/perf/gate_noise.py` measures the false-merge rate and the tasks used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar

from ..contracts.gate import BasePolicy, Look, ValidationPlan, Verdict
from ..core.errors import WikiskillError
from ..core.parts import GATE_POLICY
from ..store.evaluations import Evaluation
from ..store.trailers import Crossed, Trailers
from .gate_policies import PairedPolicy, differences, evidence_of, paired, verdict_of
from .settings import CostRule, GateSettings

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Floats = NDArray[np.float64]

SPENDING_POWER = 3
"""Alpha spent by the task fraction t: alpha * t^3."""
FUTILITY_POWER = 0.1
"""Reject early when the conditional power falls below this."""
GRID = 1001
"""Points of the numerical integration of the boundaries."""


@dataclass(frozen=True)
class Design:
    """The looks and boundaries of one pool, batch and significance level."""

    counts: tuple[int, ...]
    """Tasks used at each look."""
    upper: tuple[Fraction, ...]
    lower: tuple[Fraction | None, ...]

    @property
    def final_alpha(self) -> float:
        """The level of the last look's fixed-n test."""
        from scipy.stats import norm

        return float(norm.sf(float(self.upper[-1])))


def look_counts(pool: int, batch: int) -> tuple[int, ...]:
    return tuple(range(batch, pool, batch)) + (pool,)


@lru_cache(maxsize=32)
def design(pool: int, batch: int, alpha: float) -> Design:
    from scipy.stats import norm

    counts = look_counts(pool, batch)
    upper = tuple(_round(c, up=True) for c in _efficacy([n / pool for n in counts], alpha))
    last = float(upper[-1])
    lower = tuple(
        _round(last * math.sqrt(n / pool) - float(norm.isf(FUTILITY_POWER)) * math.sqrt((pool - n) / n), up=False)
        for n in counts[:-1]
    )
    return Design(counts, upper, (*lower, None))


def _round(value: float, up: bool) -> Fraction:
    return Fraction(math.ceil(value * 1000) if up else math.floor(value * 1000), 1000)


def _efficacy(fractions: list[float], alpha: float) -> list[float]:
    """z-boundaries spending alpha * t^SPENDING_POWER: the density of the Brownian motion
    B(t) = z sqrt(t) on the region not yet stopped is carried from look to look on a grid."""
    import numpy as np
    from scipy.optimize import brentq
    from scipy.special import ndtri

    def normal(x: Floats) -> Floats:
        return np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)

    bounds: list[float] = []
    grid: Floats | None = None
    mass: Floats | None = None
    before, spent = 0.0, 0.0
    for t in fractions:
        target = alpha * t**SPENDING_POWER - spent
        if grid is None or mass is None:
            bound = float(-ndtri(target))
            points = np.linspace(-8 * math.sqrt(t), bound * math.sqrt(t), GRID)
            density = normal(points / math.sqrt(t)) / math.sqrt(t)
        else:
            step = math.sqrt(t - before)
            bound = float(brentq(_crossing, -12.0, 12.0, args=(mass, grid, math.sqrt(t), step, target), xtol=1e-10))
            points = np.linspace(-8 * math.sqrt(t), bound * math.sqrt(t), GRID)
            density = (normal((points[:, None] - grid[None, :]) / step) / step) @ mass
        weights = np.full(GRID, points[1] - points[0])
        weights[[0, -1]] /= 2
        grid, mass = points, density * weights
        bounds.append(bound)
        before, spent = t, alpha * t**SPENDING_POWER
    return bounds


def _crossing(z: float, mass: Floats, grid: Floats, root_t: float, step: float, target: float) -> float:
    """P(first crossing of z at this look) - the alpha to spend at it."""
    from scipy.special import ndtr

    return float(mass @ ndtr((grid - z * root_t) / step)) - target


def z_at_least(total: Fraction, squares: Fraction, bound: Fraction) -> bool:
    """Whether z = total / sqrt(squares) >= bound, exactly (z is 0 when every difference is 0)."""
    if squares == 0:
        return bound <= 0
    if bound >= 0:
        return total >= 0 and total * total >= bound * bound * squares
    return total >= 0 or total * total <= bound * bound * squares


@GATE_POLICY.builtin
class SequentialPolicy(BasePolicy):
    """`paired`, a batch at a time: accept at an efficacy boundary, reject at a futility one, and
    at the pool's end `paired`'s verdict at the level left; the false-merge rate over all looks
    stays at most 1 - `confidence`."""

    name: ClassVar[str]
    has_level: ClassVar[bool] = True

    def __init__(self, confidence: float, margin: float, batch: int, seed: int = 0, futility: bool = True):
        self.confidence, self.margin, self.batch, self.seed = confidence, margin, batch, seed
        self.futility = futility
        """Stop early when a gain is out of reach; off under `gate.cost: tiebreak`, where a tie
        may still be merged as cheaper (the efficacy boundaries do not depend on it)."""

    @classmethod
    def from_settings(cls, settings: GateSettings) -> SequentialPolicy:
        futility = settings.cost is not CostRule.TIEBREAK
        return cls(settings.confidence, settings.margin, settings.batch, settings.seed, futility)

    @classmethod
    def recorded_settings(cls, recorded: Trailers, settings: GateSettings) -> GateSettings:
        """The design its looks record; the confidence recorded is the one it ran at, so it is
        not split again under `tiebreak`."""
        design = {
            "confidence": recorded.confidence or 0.95,
            "margin": recorded.margin or 0.0,
            "batch": recorded.batch or 1,
            "cost": recorded.cost_rule or CostRule.IGNORE,
        }
        return super().recorded_settings(recorded, settings.model_copy(update=design))

    def plan(self) -> ValidationPlan:
        return ValidationPlan(looks=self)

    def counts(self, pool: int) -> tuple[int, ...]:
        return look_counts(pool, self.batch)

    def design(self, pool: int) -> Design:
        return design(pool, self.batch, round(1 - self.confidence, 12))

    def judge(self, candidate: Evaluation, incumbent: Evaluation, at_least: bool = False) -> Verdict:
        """Every look over the tasks given, as the whole pool."""
        return self.judge_looks(candidate, incumbent, candidate.size, at_least)

    def judge_looks(self, candidate: Evaluation, incumbent: Evaluation, pool: int, at_least: bool = False) -> Verdict:
        paired(candidate, incumbent)  # the same tasks on both sides
        order = list(candidate.tasks)  # the pool's order
        for n in self.design(pool).counts:
            if n > len(order):
                break
            first = order[:n]
            verdict = self._decide(candidate.only(first), incumbent.only(first), pool, at_least)
            if verdict is not None:
                return verdict
        raise WikiskillError(
            f"a sequential validation of {len(order)} of {pool} tasks stopped without a verdict "
            "(it needs the next batch)"
        )

    def look(self, candidate: Evaluation, incumbent: Evaluation, pool: int, at_least: bool = False) -> Look:
        plan = self.design(pool)
        if candidate.size not in plan.counts:
            raise WikiskillError(f"{candidate.size} of {pool} validation tasks is no look of batch {self.batch}")
        index = plan.counts.index(candidate.size)
        excess = differences(paired(candidate, incumbent), less=self.margin)
        total, squares = sum(excess, Fraction(0)), sum((d * d for d in excess), Fraction(0))
        upper, lower = plan.upper[index], plan.lower[index]
        if index == len(plan.counts) - 1:
            crossed: Crossed | None = Crossed.POOL_END
        elif at_least:
            crossed = None  # a retire is judged on the whole pool
        elif z_at_least(total, squares, upper):
            crossed = Crossed.EFFICACY
        elif self.futility and lower is not None and not z_at_least(total, squares, lower):
            crossed = Crossed.FUTILITY
        else:
            crossed = None
        return Look(
            index + 1,
            len(plan.counts),
            candidate.size,
            pool,
            self.batch,
            self.confidence,
            self.margin,
            float(total) / math.sqrt(squares) if squares else 0.0,
            float(upper),
            None if lower is None else float(lower),
            crossed,
        )

    def _decide(self, candidate: Evaluation, incumbent: Evaluation, pool: int, at_least: bool) -> Verdict | None:
        look = self.look(candidate, incumbent, pool, at_least)
        if look.crossed is None:
            return None
        if look.crossed is Crossed.POOL_END:
            return self._pool_end(candidate, incumbent, look, at_least)
        evidence = evidence_of(self.name, candidate, incumbent, confidence=self.confidence, look=look)
        reason = (
            f"val {candidate.mean:.3f} vs incumbent {incumbent.mean:.3f} on the first {look.tasks} of {pool} "
            f"tasks: {len(evidence.fixed)} fixed, {len(evidence.broken)} broken, mean difference "
            f"{evidence.mean_diff:+.4f}; {look.text()}"
        )
        return verdict_of(look.crossed is Crossed.EFFICACY, reason, evidence)

    def _pool_end(self, candidate: Evaluation, incumbent: Evaluation, look: Look, at_least: bool) -> Verdict:
        plan = self.design(look.pool)
        single = len(plan.counts) == 1
        level = self.confidence if single else 1 - plan.final_alpha
        verdict = PairedPolicy(level, self.margin, self.seed).judge(candidate, incumbent, at_least)
        evidence = replace(verdict.evidence, policy=self.name, look=look)
        where = look.text() + ("" if single else f", paired at {level:.4f}")
        return Verdict(verdict.decision, f"{verdict.reason}; {where}", evidence)
