"""Infrastructure failures are not task failures: a task whose machinery failed (an
`InfrastructureError` from the task agent: a scorer that crashed or wrote no reward, an image
that would not build, a container that would not start) is tried again up to `infra.retries`
times, waiting `infra.backoff` seconds, doubled each time, between tries; if it fails so every
time it is recorded with `failure: infra` and the reasons, with no score. The trajectory says how
many retries it took (`Trajectory.retries`), which the evaluation commits count. Every executor
builds its agent through `Team.agent`, which wraps it in `RetryInfra`. A retry runs where the first
try ran, on the same worker (`run`), except under the `ray` executor with workers on several nodes:
there each try is one `once`, and the command waits out the backoff and sends the next try to a
worker of another node (`executors/ray_actors.py`). Either way `once` words the outcome, so a
task's trajectory is the same wherever its tries ran (a scored task never reaches here again: the
result cache answers it)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from ..benchmarks import BenchmarkKind, Task
from ..contracts.roles import TaskAgent
from ..core.errors import InfrastructureError
from ..store.traces import Trajectory, infra_trajectory
from .settings import InfraSettings


@dataclass(frozen=True)
class TryAgain:
    """A try that failed on infrastructure with retries left: the reasons of every try so far,
    and how long to wait before the next one."""

    reasons: tuple[str, ...]
    delay: float


class RetryInfra:
    """Follows `protocols.TaskAgent` around another one."""

    def __init__(self, inner: TaskAgent, kind: BenchmarkKind, settings: InfraSettings):
        self.inner = inner
        self.kind = kind
        self.settings = settings

    async def run(self, task: Task) -> Trajectory:
        """Every try of `task` here, waiting the backoff between them."""
        outcome = await self.once(task)
        while isinstance(outcome, TryAgain):
            await asyncio.sleep(outcome.delay)
            outcome = await self.once(task, outcome.reasons)
        return outcome

    async def once(self, task: Task, earlier: tuple[str, ...] = ()) -> Trajectory | TryAgain:
        """One try of `task` after the tries that failed for `earlier` reasons: its trajectory, the
        infra trajectory when no retry is left, else what the next try needs."""
        try:
            trajectory = await self.inner.run(task)
        except InfrastructureError as exc:
            reasons = (*earlier, " ".join(str(exc).split()))
            if len(reasons) <= self.settings.retries:
                return TryAgain(reasons, self.settings.delay(len(reasons)))
            return self._given_up(task, reasons)
        return trajectory.model_copy(update={"retries": len(earlier)}) if earlier else trajectory

    def _given_up(self, task: Task, reasons: tuple[str, ...]) -> Trajectory:
        tries = len(reasons)
        shown = reasons[-1] if len(set(reasons)) == 1 else "; then ".join(reasons)
        failed = infra_trajectory(
            task.id,
            task.split,
            self.kind,
            task.question,
            f"infrastructure failure, {tries} {'try' if tries == 1 else 'tries'}: {shown}",
        )
        return failed.model_copy(update={"retries": tries - 1})
