"""Run many tasks concurrently, with results cached per task so a crash never recomputes them.

Results come back in task order whatever order they finish in.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from .benchmarks import Task
from .llm import Meter
from .roles.agent import Agent
from .traces import Trajectory


class ResultCache:
    """Finished trajectories of one step, under .wikiskill/results/<key>/."""

    def __init__(self, root: Path, key: str):
        self.directory = root / "results" / key
        self.directory.mkdir(parents=True, exist_ok=True)

    def _path(self, task_id: str) -> Path:
        return self.directory / (hashlib.sha256(task_id.encode()).hexdigest()[:32] + ".json")

    def get(self, task_id: str) -> Trajectory | None:
        try:
            return Trajectory.model_validate_json(self._path(task_id).read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return None

    def put(self, trajectory: Trajectory) -> None:
        path = self._path(trajectory.task_id)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(trajectory.to_json(), encoding="utf-8")
        os.replace(tmp, path)


def cache_key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:24]


async def run_all(
    tasks: list[Task],
    agent: Agent,
    concurrency: int,
    meter: Meter,
    cache: ResultCache | None = None,
    on_done: Callable[[Trajectory], None] | None = None,
) -> list[Trajectory]:
    """Each task at most once; a budget or model error stops new tasks and is raised at the end."""
    limit = asyncio.Semaphore(concurrency)
    results: dict[str, Trajectory] = {}

    async def one(task: Task) -> None:
        cached = cache.get(task.id) if cache else None
        if cached is None:
            async with limit:
                meter.check()
                cached = await agent.run(task)
            if cache:
                cache.put(cached)
        results[task.id] = cached
        if on_done:
            on_done(cached)

    outcomes = await asyncio.gather(*(one(task) for task in tasks), return_exceptions=True)
    errors = [error for error in outcomes if isinstance(error, BaseException)]
    if errors:
        raise errors[0]
    return [results[task.id] for task in tasks]


def run_tasks(*args, **kwargs) -> list[Trajectory]:
    return asyncio.run(run_all(*args, **kwargs))
