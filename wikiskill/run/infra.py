"""Infrastructure failures are not task failures: a task whose machinery failed (an
`InfrastructureError` from the task agent: a scorer that crashed or wrote no reward, an image
that would not build, a container that would not start) is tried again up to `infra.retries`
times, waiting `infra.backoff` seconds, doubled each time, between tries; if it fails so every
time it is recorded with `failure: infra` and the reasons, with no score. The trajectory says how
many retries it took (`Trajectory.retries`), which the evaluation commits count. Every executor
builds its agent through `Team.agent`, which wraps it in `RetryInfra`; the retries run where the
first try ran, on the same worker (a scored task never reaches here again: the result cache
answers it)."""

from __future__ import annotations

import asyncio

from ..benchmarks import BenchmarkKind, Task
from ..contracts.roles import TaskAgent
from ..core.errors import InfrastructureError
from ..store.traces import Trajectory, infra_trajectory
from .settings import InfraSettings


class RetryInfra:
    """Follows `protocols.TaskAgent` around another one."""

    def __init__(self, inner: TaskAgent, kind: BenchmarkKind, settings: InfraSettings):
        self.inner = inner
        self.kind = kind
        self.settings = settings

    async def run(self, task: Task) -> Trajectory:
        reasons: list[str] = []
        for retry in range(self.settings.retries + 1):
            if retry:
                await asyncio.sleep(self.settings.delay(retry))
            try:
                trajectory = await self.inner.run(task)
            except InfrastructureError as exc:
                reasons.append(" ".join(str(exc).split()))
                continue
            return trajectory.model_copy(update={"retries": retry}) if retry else trajectory
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
