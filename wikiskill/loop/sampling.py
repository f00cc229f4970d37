"""Which trajectories the maintainer reads each round: a seeded sample of failures and successes."""

from __future__ import annotations

import random

from ..store.traces import Trajectory
from .settings import SamplingSettings


def sample_traces(trajectories: list[Trajectory], settings: SamplingSettings, round_number: int) -> list[Trajectory]:
    """Up to `max_failures` failures then up to `max_successes` successes, in task-id order.

    The same workspace, round and seed always give the same sample, so a resumed round
    shows the maintainer what the interrupted one would have.
    """
    rng = random.Random(f"{settings.seed}:{round_number}")
    ordered = sorted(trajectories, key=lambda t: t.task_id)
    failures = [t for t in ordered if not t.success]
    successes = [t for t in ordered if t.success]
    picked = _pick(rng, failures, settings.max_failures) + _pick(rng, successes, settings.max_successes)
    return picked


def _pick(rng: random.Random, items: list[Trajectory], count: int) -> list[Trajectory]:
    if len(items) <= count:
        return list(items)
    return sorted(rng.sample(items, count), key=lambda t: t.task_id)
