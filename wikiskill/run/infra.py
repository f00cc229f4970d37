"""Infrastructure failures are not task failures: a task whose machinery failed (an
`InfrastructureError` from the task agent: a scorer that crashed or wrote no reward, an image
that would not build, a container that would not start) is run once more, and if it fails so
again it is recorded with `failure: infra` and the reason, with no score. Every executor builds
its agent through `Team.agent`, which wraps it in `RetryInfra`."""

from __future__ import annotations

from ..benchmarks import BenchmarkKind, Task
from ..contracts.roles import TaskAgent
from ..core.errors import InfrastructureError
from ..store.traces import Trajectory, infra_trajectory

ATTEMPTS = 2
"""A task's tries when its machinery fails: the first and one retry."""


class RetryInfra:
    """Follows `protocols.TaskAgent` around another one."""

    def __init__(self, inner: TaskAgent, kind: BenchmarkKind):
        self.inner = inner
        self.kind = kind

    async def run(self, task: Task) -> Trajectory:
        reasons = []
        for _ in range(ATTEMPTS):
            try:
                return await self.inner.run(task)
            except InfrastructureError as exc:
                reasons.append(" ".join(str(exc).split()))
        shown = reasons[-1] if len(set(reasons)) == 1 else "; then ".join(reasons)
        return infra_trajectory(
            task.id, task.split, self.kind, task.question, f"infrastructure failure, {ATTEMPTS} tries: {shown}"
        )
