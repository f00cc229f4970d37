"""The statistics of `wikiskill uplift`: means and 95% intervals of arms scored on the same tasks K
times each, by a nested bootstrap (tasks resampled, then each resampled task's trials): the
interval covers both which tasks were drawn and how a task's score varies between trials. A
difference between two arms resamples the same tasks on both sides (paired), the trials of each
side on their own."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

RESAMPLES = 4000
LEVEL = 0.95


@dataclass(frozen=True)
class Resampler:
    """One draw of tasks for every comparison, so every arm's interval rests on the same tasks."""

    tasks: np.ndarray
    """(resamples, n) task indices."""
    rng: np.random.Generator

    @classmethod
    def of(cls, n: int, seed: int = 0, resamples: int = RESAMPLES) -> Resampler:
        rng = np.random.default_rng(seed)
        return cls(rng.integers(0, n, (resamples, n)), rng)

    def means(self, scores: np.ndarray) -> np.ndarray:
        """The arm's mean in each resample; `scores` is (tasks, trials)."""
        trials = scores.shape[1]
        picked = self.rng.integers(0, trials, (*self.tasks.shape, trials))
        means: npt.NDArray[np.float64] = scores[self.tasks[:, :, None], picked].mean(axis=(1, 2))  # numpy: Any
        return means


def interval(samples: np.ndarray) -> tuple[float, float]:
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(low), float(high)


def pass_hat_k(scores: np.ndarray) -> float | None:
    """The share of tasks solved in every one of their trials (pass^k); None unless scores are 0/1."""
    if not np.isin(scores, (0.0, 1.0)).all():
        return None
    return float((scores >= 1.0).all(axis=1).mean())


def pass_at_1(scores: np.ndarray) -> float | None:
    """The chance one trial solves a task (pass@1); None unless scores are 0/1."""
    return float(scores.mean()) if np.isin(scores, (0.0, 1.0)).all() else None
