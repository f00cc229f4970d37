"""Vectorised draws and verdicts for gate_noise.py: thousands of trials of the gate's policies in
seconds. Each verdict here mirrors a policy class of wikiskill/loop/ on arrays of trials;
`agreement` runs the classes themselves on the first trials and says how often the two agree.

The noisy agent: task i is solved with probability p_i ~ Beta(0.5, 0.5) (most tasks nearly always
or nearly never solved, some flaky), independently in every evaluation; an improved candidate
has p_i + delta (capped at 1). Kinds of score:

- `pass/fail`: 1 or 0;
- `graded`: partial credit, 5 sub-goals each reached with probability p_i (as in TextWorld);
- `judged xN`: a judge reads the graded score with noise, each reading the true score plus a
  normal error of sd `JUDGE_SD`, on a 0-10 scale (rounded to 0.1, clipped to [0, 1]), and
  `judge.samples: N` readings are averaged per task.
"""

from __future__ import annotations

import numpy as np

from wikiskill.core.config import GateSettings
from wikiskill.loop.gate_policies import gate_policy
from wikiskill.loop.sequential import design
from wikiskill.store.evaluations import Evaluation
from wikiskill.store.trailers import Decision

JUDGE_SD = 0.2
KINDS = ("pass/fail", "graded", "judged x1", "judged x3")


def probabilities(rng: np.random.Generator, trials: int, n: int, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """(incumbent's, candidate's) per-task chances of success."""
    p = rng.beta(0.5, 0.5, (trials, n))
    return p, np.minimum(1.0, p + delta)


def play(rng: np.random.Generator, chance: np.ndarray, kind: str) -> np.ndarray:
    """One evaluation's per-task scores, as the outcomes file writes them (6 decimals)."""
    if kind == "pass/fail":
        return (rng.random(chance.shape) < chance).astype(float)
    graded = rng.binomial(5, chance) / 5
    if kind == "graded":
        return graded
    samples = int(kind.rpartition("x")[2])
    readings = np.clip(
        np.round((graded[..., None] + rng.normal(0.0, JUDGE_SD, (*graded.shape, samples))) * 10) / 10, 0.0, 1.0
    )
    return np.round(readings.mean(axis=-1), 6)


# -- verdicts on arrays of trials (rows) ---------------------------------------------------------


def strict(candidate: np.ndarray, incumbent: np.ndarray) -> np.ndarray:
    return (candidate.sum(axis=1) - incumbent.sum(axis=1)) > 1e-9


def no_regression(candidate: np.ndarray, incumbent: np.ndarray, max_broken: int = 0) -> np.ndarray:
    broken = ((incumbent >= 1.0) & (candidate < 1.0)).sum(axis=1)
    return strict(candidate, incumbent) & (broken <= max_broken)


def paired(candidate: np.ndarray, incumbent: np.ndarray, alpha: float) -> np.ndarray:
    """`paired` at margin 0: the exact sign test on pass/fail scores; on others the sign-flip
    test and BCa bound, mirrored by a one-sided t-test (with the class's rule that fewer than
    log2(1/alpha) changed tasks cannot show a gain)."""
    from scipy.stats import binom, ttest_1samp

    diffs = candidate - incumbent
    if np.isin(candidate, (0.0, 1.0)).all() and np.isin(incumbent, (0.0, 1.0)).all():
        fixed, broken = (diffs > 0).sum(axis=1), (diffs < 0).sum(axis=1)
        return (fixed > broken) & (binom.sf(fixed - 1, fixed + broken, 0.5) < alpha)
    moved = (np.abs(diffs) > 1e-12).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = ttest_1samp(diffs, 0.0, axis=1, alternative="greater").pvalue
    return (0.5**moved < alpha) & (np.nan_to_num(p, nan=1.0) < alpha) & (diffs.mean(axis=1) > 0)


def sequential(candidate: np.ndarray, incumbent: np.ndarray, alpha: float, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """(accepted, tasks used) of `sequential` over the whole row as the pool."""
    trials, pool = candidate.shape
    plan = design(pool, batch, round(alpha, 12))
    counts = np.array(plan.counts)
    diffs = candidate - incumbent
    total, squares = np.cumsum(diffs, axis=1)[:, counts - 1], np.cumsum(diffs * diffs, axis=1)[:, counts - 1]
    z = np.where(squares > 0, total / np.sqrt(np.maximum(squares, 1e-300)), 0.0)
    accepted, stopped = np.zeros(trials, bool), np.zeros(trials, bool)
    tasks = np.full(trials, pool)
    for look in range(len(counts) - 1):
        up = ~stopped & (z[:, look] >= float(plan.upper[look]))
        down = ~stopped & ~up & (z[:, look] < float(plan.lower[look]))
        accepted |= up
        tasks[up | down] = counts[look]
        stopped |= up | down
    last = ~stopped
    accepted[last] = paired(candidate[last], incumbent[last], plan.final_alpha if len(counts) > 1 else alpha)
    return accepted, tasks


# -- the policy classes themselves, for the agreement check ------------------------------------------


def agreement(
    kind: str, candidate: np.ndarray, incumbent: np.ndarray, mirrored: np.ndarray, settings: GateSettings, trials: int
) -> float:
    """The share of the first `trials` rows on which the policy class gives the mirror's verdict."""
    policy = gate_policy(settings)
    same = 0
    for row in range(min(trials, len(candidate))):
        ids = [f"t{index}" for index in range(candidate.shape[1])]
        mine = Evaluation("c", "setup", "c", dict(zip(ids, map(float, candidate[row]), strict=True)))
        theirs = Evaluation("i", "setup", "i", dict(zip(ids, map(float, incumbent[row]), strict=True)))
        same += (policy.judge(mine, theirs).decision == Decision.ACCEPTED) == bool(mirrored[row])
    return same / min(trials, len(candidate))
