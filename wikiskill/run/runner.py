"""Run many tasks concurrently on one event loop, with results cached per task so a crash never
recomputes them. Results come back in task order whatever order they finish in. (Executors in
wikiskill/run/executors/ run them elsewhere: worker processes, Ray.)
"""

from __future__ import annotations

import asyncio
import os
import uuid
import weakref
from collections.abc import Callable
from pathlib import Path

from ..benchmarks import Task
from ..llm.meter import Meter
from ..core.redact import Scrubber
from ..roles.agent import Agent
from ..store.traces import Trajectory


class ResultCache:
    """Finished trajectories of one step, as JSON lines under .wikiskill/results/<key>/.

    Each writer appends to a file of its own, opened once: a task costs one short write, not a
    file of its own. A line that a crash cut short
    does not parse and is skipped, so that task simply runs again. Secrets are scrubbed as in git.
    """

    def __init__(self, root: Path, key: str):
        self.directory = root / "results" / key
        self.directory.mkdir(parents=True, exist_ok=True)
        self._done = self._read()
        self._fd: int | None = None
        self._scrub = Scrubber()

    def _read(self) -> dict[str, Trajectory]:
        done = {}
        for path in sorted(self.directory.glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    trajectory = Trajectory.model_validate_json(line)
                except ValueError:
                    continue
                done[trajectory.task_id] = trajectory
        return done

    def get(self, task_id: str) -> Trajectory | None:
        return self._done.get(task_id)

    def put(self, trajectory: Trajectory) -> None:
        if self._fd is None:
            name = f"{os.getpid()}-{uuid.uuid4().hex[:8]}.jsonl"
            self._fd = os.open(self.directory / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            weakref.finalize(self, os.close, self._fd)
        # one write call per line, straight to the kernel: a killed process loses no finished task
        os.write(self._fd, (self._scrub(trajectory.model_dump_json()) + "\n").encode("utf-8"))
        self._done[trajectory.task_id] = trajectory


async def run_all(
    tasks: list[Task],
    agent: Agent,
    concurrency: int,
    meter: Meter,
    cache: ResultCache | None = None,
    on_done: Callable[[Trajectory], None] | None = None,
) -> list[Trajectory]:
    """Each task at most once, in task order.

    The budget is checked before a task starts, never inside one: once it is reached, or a task
    fails, no new task starts; tasks in flight finish (and are cached), then the error is raised.
    """
    limit = asyncio.Semaphore(concurrency)
    stop = asyncio.Event()
    results: dict[str, Trajectory] = {}

    async def one(task: Task) -> None:
        trajectory = cache.get(task.id) if cache else None
        if trajectory is None:
            async with limit:
                if stop.is_set():
                    return
                try:
                    meter.check()
                    trajectory = await agent.run(task)
                except BaseException:
                    stop.set()
                    raise
            if cache:
                cache.put(trajectory)
        results[task.id] = trajectory
        if on_done:
            on_done(trajectory)

    outcomes = await asyncio.gather(*(one(task) for task in tasks), return_exceptions=True)
    errors = [error for error in outcomes if isinstance(error, BaseException)]
    if errors:
        raise errors[0]
    return [results[task.id] for task in tasks]


def run_tasks(*args, **kwargs) -> list[Trajectory]:
    return asyncio.run(run_all(*args, **kwargs))
