"""How commit subjects state results: games won (QA: tasks solved) and the mean score, never one
mistaken for the other."""

from __future__ import annotations

from ...store.evaluations import Evaluation
from ...store.traces import Trajectory, mean_score, scored


def outcome(solved: int, n: int, score: float, interactive: bool, infra: int = 0) -> str:
    """`won 3/18, score 0.420` (interactive) or `solved 3/6, score 0.500` (QA), over the scored
    tasks, and `, 1 infra` when tasks were left out as infrastructure failures."""
    left_out = f", {infra} infra" if infra else ""
    return f"{'won' if interactive else 'solved'} {solved}/{n}, score {score:.3f}{left_out}"


def of_trajectories(trajectories: list[Trajectory], interactive: bool) -> str:
    kept = scored(trajectories)
    return outcome(
        sum(t.success for t in kept), len(kept), mean_score(kept), interactive, len(trajectories) - len(kept)
    )


def of_evaluation(evaluation: Evaluation, interactive: bool) -> str:
    return outcome(evaluation.solved, evaluation.n, evaluation.mean, interactive, len(evaluation.infra))
