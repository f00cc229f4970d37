"""The `scienceworld` benchmark: ScienceWorld's simulated science tasks, played one action per turn.

ScienceWorld runs in a Java VM that the `scienceworld` package starts through py4j; starting one
costs seconds, loading a task into a running one a fraction of a second. So the VMs of a process
are kept in one pool: an episode borrows one at `reset`, loads its task and variation into it,
and hands it back at `close`; the pool shuts its VMs down when the process exits.

Splits are ScienceWorld's own (its train/dev/test variations of every task type). A split's tasks
are a fixed sample of them, dealt round-robin over the task types from a per-type shuffle with a
fixed seed, so every split covers the task types evenly and always holds the same tasks.
"""

from __future__ import annotations

import atexit
import random
import threading
from functools import cache
from typing import Any

from scienceworld import ScienceWorldEnv
from scienceworld.constants import ID2TASK
from scienceworld.utils import infer_task

from ..core.errors import BenchmarkError
from .base import BenchmarkSpec, EnvStep, Split, Task

SAMPLE_SEED = "wikiskill-scienceworld-1"
MAX_SCORE = 100.0
"""ScienceWorld scores a task 0..100 (negative when the task was failed)."""
ENV_STEP_LIMIT = 100_000
"""The VM's own move limit, set out of the way: the agent's `max_steps` ends an episode."""

_VARIATIONS: dict[Split, str] = {
    "train": "get_variations_train",
    "val": "get_variations_dev",
    "test": "get_variations_test",
}


class _Pool:
    """Idle ScienceWorld VMs of this process, reused across episodes and tasks."""

    def __init__(self) -> None:
        self._idle: list[ScienceWorldEnv] = []
        self._lock = threading.Lock()

    def borrow(self) -> ScienceWorldEnv:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return ScienceWorldEnv("", envStepLimit=ENV_STEP_LIMIT)

    def give_back(self, env: ScienceWorldEnv) -> None:
        with self._lock:
            self._idle.append(env)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for env in idle:
            env.close()


POOL = _Pool()
atexit.register(POOL.close)


def task_names() -> list[str]:
    """ScienceWorld's task types, read from its package data (no VM needed)."""
    return sorted(infer_task(task_id) for task_id in ID2TASK)


@cache
def variations(name: str) -> dict[Split, list[int]]:
    """A task type's variations per split, as ScienceWorld assigns them."""
    env = POOL.borrow()
    try:
        env.load(name, 0, "")
        return {split: list(getattr(env, method)()) for split, method in _VARIATIONS.items()}
    finally:
        POOL.give_back(env)


@cache
def description(name: str, variation: int) -> str:
    env = POOL.borrow()
    try:
        env.load(name, variation, "")
        return str(env.get_task_description())
    finally:
        POOL.give_back(env)


def sample(names: list[str], split: Split) -> list[tuple[str, int]]:
    """All (task type, variation) pairs of a split, in the fixed round-robin order."""
    shuffled = []
    for name in sorted(names):
        pool = list(variations(name)[split])
        random.Random(f"{SAMPLE_SEED}:{name}:{split}").shuffle(pool)
        shuffled.append([(name, variation) for variation in pool])
    longest = max((len(pool) for pool in shuffled), default=0)
    return [pool[index] for index in range(longest) for pool in shuffled if index < len(pool)]


class ScienceWorldTextEnv:
    """One ScienceWorld task variation behind the `TextEnv` protocol."""

    def __init__(self, task_name: str, variation: int):
        self.task_name = task_name
        self.variation = variation
        self._env: ScienceWorldEnv | None = None
        self._last: EnvStep | None = None

    def reset(self) -> EnvStep:
        if self._env is None:
            self._env = POOL.borrow()
        self._env.load(self.task_name, self.variation, "")
        observation, info = self._env.reset()
        return self._record(observation, info, done=False)

    def step(self, action: str) -> EnvStep:
        """Play one action; after the task ended, the final step is returned again."""
        if self._env is None or self._last is None:
            raise RuntimeError("call reset() before step()")
        if self._last.done:
            return self._last
        observation, _, done, info = self._env.step(action)
        return self._record(observation, info, done=bool(done))

    def close(self) -> None:
        if self._env is not None:
            POOL.give_back(self._env)
        self._env = None
        self._last = None

    def _record(self, observation: str, info: dict[str, Any], done: bool) -> EnvStep:
        score = float(info["score"])
        self._last = EnvStep(
            observation=observation.strip(),
            score=score,
            max_score=MAX_SCORE,
            done=done,
            won=score >= MAX_SCORE,
            lost=score < 0,
            admissible_actions=list(info["valid"]),
        )
        return self._last


class ScienceWorld:
    """A fixed sample of ScienceWorld's variations per split, of one task type or of all."""

    def __init__(
        self,
        task_name: str | None,
        counts: dict[Split, int],
        *,
        configured: frozenset[str] = frozenset(),
        spec: BenchmarkSpec,
        name: str,
    ):
        self.task_name = task_name
        self.counts = counts
        self.configured = configured
        self.spec = spec
        self.name = name

    def pairs(self, split: Split) -> list[tuple[str, int]]:
        names = [self.task_name] if self.task_name else task_names()
        found = sample(names, split)
        wanted = self.counts[split]
        if wanted > len(found) and split in self.configured:
            raise BenchmarkError(f"{self.name}: ScienceWorld has {len(found)} {split} variations, not {wanted}")
        return found[:wanted]

    def prepare(self, splits: tuple[Split, ...]) -> None:
        for split in splits:
            self.tasks(split)

    def tasks(self, split: Split) -> list[Task]:
        return [
            Task(
                id=f"sw-{name}-{variation}",
                split=split,
                question=description(name, variation),
                metadata={"task_name": name, "variation": variation},
            )
            for name, variation in self.pairs(split)
        ]

    def make_env(self, task: Task) -> ScienceWorldTextEnv:
        return ScienceWorldTextEnv(task.metadata["task_name"], task.metadata["variation"])

    def reference_actions(self, task: Task) -> list[str]:
        """ScienceWorld's gold action sequence for the task: the known-good policy.

        ScienceWorld generates it anew on each call, and for tasks that wait on a process (heating,
        boiling) its length varies; a replay of such a path does not always reach 100.
        """
        env = POOL.borrow()
        try:
            env.load(task.metadata["task_name"], task.metadata["variation"], "", generateGoldPath=True)
            return list(env.get_gold_action_sequence())
        finally:
            POOL.give_back(env)
