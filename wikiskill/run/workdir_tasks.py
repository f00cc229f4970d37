"""A workdir suite's task agent: a fresh working directory per task, the task's files copied in,
the inner agent's play, then the suite's scorer in that directory, which is removed afterwards.

The scorer runs in a thread (a check command or a judge's calls block). An exception from it,
a timeout included, fails that task alone: the trajectory keeps what the agent did, scores 0 and
carries the reason as its `error`. Running out of budget still stops the command.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

from ..benchmarks import Task
from ..contracts.roles import Scorer, WorkdirAgent
from ..core.errors import BudgetExceeded
from ..store.traces import Trajectory


class WorkdirTaskAgent:
    """Follows `protocols.TaskAgent` for a workdir suite, around a `protocols.WorkdirAgent`."""

    def __init__(self, inner: WorkdirAgent, scorer: Scorer):
        self.inner = inner
        self.scorer = scorer

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
            except BudgetExceeded:
                raise
            except Exception as exc:  # noqa: BLE001 - a user's check or scorer may fail in any way
                reason = f"the scorer failed: {_one_line(exc)}"
                error = f"{trajectory.error}; {reason}" if trajectory.error else reason
                return trajectory.model_copy(update={"score": 0.0, "feedback": None, "error": error})
        return trajectory.model_copy(update={"score": score.value, "feedback": score.feedback or None})


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
