"""How commit subjects state results: games won (QA: tasks solved) and the mean score, never one
mistaken for the other."""

from __future__ import annotations

from ...store.evaluations import Evaluation
from ...store.traces import Trajectory, mean_score


def outcome(solved: int, n: int, score: float, interactive: bool) -> str:
    """`won 3/18, score 0.420` (interactive) or `solved 3/6, score 0.500` (QA)."""
    return f"{'won' if interactive else 'solved'} {solved}/{n}, score {score:.3f}"


def of_trajectories(trajectories: list[Trajectory], interactive: bool) -> str:
    return outcome(sum(t.success for t in trajectories), len(trajectories), mean_score(trajectories), interactive)


def of_evaluation(evaluation: Evaluation, interactive: bool) -> str:
    return outcome(evaluation.solved, evaluation.n, evaluation.mean, interactive)
