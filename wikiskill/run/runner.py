"""Run many tasks concurrently on one event loop, with results cached per task
(`store.results`) so a crash never recomputes them. Results come back in task order whatever order
they finish in. (Executors in wikiskill/run/executors/ run them elsewhere: worker processes, Ray.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ..benchmarks import Task
from ..contracts.roles import TaskAgent
from ..llm.meter import Meter
from ..store.results import ResultCache
from ..store.traces import Trajectory
from ..telemetry.spans import task_span


async def run_all(
    tasks: list[Task],
    agent: TaskAgent,
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
                with task_span(task.id) as span:
                    try:
                        meter.check()
                        trajectory = await agent.run(task)
                    except BaseException:
                        stop.set()
                        raise
                    span.set({"wikiskill.score": trajectory.score, "wikiskill.failure": trajectory.failure})
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


def run_tasks(
    tasks: list[Task],
    agent: TaskAgent,
    concurrency: int,
    meter: Meter,
    cache: ResultCache | None = None,
    on_done: Callable[[Trajectory], None] | None = None,
) -> list[Trajectory]:
    """`run_all` on an event loop of its own."""
    return asyncio.run(run_all(tasks, agent, concurrency, meter, cache, on_done))
