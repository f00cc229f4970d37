"""A workdir suite's task agent: a fresh working directory per task, the task's files copied in,
the inner agent's play, then the suite's scorer in that directory, which is removed afterwards.

The scorer runs in a thread (a check command or a judge's calls block). A scorer that crashes
(any exception of its own, `InfrastructureError` included) says nothing about the agent's work:
it is raised as `InfrastructureError`, and the task is retried `infra.retries` times, then left out of the score
(`run/infra.py`). A check that runs past its timeout fails the task (`failure: timeout`, scored
0), unless the suite declares such timeouts infra. Running out of budget still stops the command.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

from ..benchmarks import Task
from ..benchmarks.task_folders import VerifierTimeout
from ..contracts.roles import Scorer, WorkdirAgent
from ..core.errors import BudgetExceeded, InfrastructureError
from ..store.traces import FailureKind, Trajectory
from .scorers import ScorerTimeout


class WorkdirTaskAgent:
    """Follows `protocols.TaskAgent` for a workdir suite, around a `protocols.WorkdirAgent`."""

    def __init__(self, inner: WorkdirAgent, scorer: Scorer, timeouts: VerifierTimeout = VerifierTimeout.TASK):
        self.inner = inner
        self.scorer = scorer
        self.timeouts = timeouts

    async def run(self, task: Task) -> Trajectory:
        with tempfile.TemporaryDirectory(prefix="wikiskill-work-") as scratch:
            workdir = Path(scratch) / "work"
            if task.files is not None:
                await asyncio.to_thread(shutil.copytree, task.files, workdir, symlinks=True)
            else:
                workdir.mkdir()
            trajectory = await self.inner.play(task, workdir)
            try:
                score = await asyncio.to_thread(self.scorer.score, task, trajectory, workdir)
            except (BudgetExceeded, InfrastructureError):
                raise
            except ScorerTimeout as exc:
                if self.timeouts is VerifierTimeout.INFRA:
                    raise InfrastructureError(str(exc)) from None
                error = f"{trajectory.error}; {exc}" if trajectory.error else str(exc)
                return trajectory.model_copy(
                    update={"score": 0.0, "feedback": None, "error": error, "failure": FailureKind.TIMEOUT}
                )
            except Exception as exc:  # noqa: BLE001 - a user's check or scorer may fail in any way
                raise InfrastructureError(f"the scorer failed: {_one_line(exc)}") from exc
        return trajectory.model_copy(update={"score": score.value, "feedback": score.feedback or None})


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
