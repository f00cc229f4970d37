"""How commit subjects state results: games won and the score, never one mistaken for the other."""

from __future__ import annotations

from ..traces import Trajectory, mean_score


def won(trajectories: list[Trajectory]) -> str:
    return f"won {sum(t.success for t in trajectories)}/{len(trajectories)}, score {mean_score(trajectories):.3f}"
