"""Run many tasks concurrently, with results cached per task so a crash never recomputes them.

Results come back in task order whatever order they finish in. One event loop drives up to
`concurrency` tasks; `workers` > 1 splits the tasks over that many processes, each with its own
event loop, for when one loop's CPU (litellm's per-call overhead) is the limit.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path

from .benchmarks import Task
from .config import Config
from .errors import BudgetExceeded, WikiskillError
from .lifeline import Lifeline, watch_parent
from .llm import Meter
from .redact import Scrubber
from .roles.agent import Agent
from .skills import Skill
from .wikitool import WikiShelf
from .traces import Trajectory, Usage


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

    def __getstate__(self) -> dict:
        """A worker process gets the folder only: it writes its own file and is never asked for old results."""
        return {"directory": self.directory}

    def __setstate__(self, state: dict) -> None:
        self.directory, self._done, self._fd = state["directory"], {}, None
        self._scrub = Scrubber()


async def run_all(
    tasks: list[Task],
    agent: Agent,
    concurrency: int,
    meter: Meter,
    cache: ResultCache | None = None,
    on_done: Callable[[Trajectory], None] | None = None,
    stop: threading.Event | None = None,
) -> list[Trajectory]:
    """Each task at most once, in task order.

    The budget is checked before a task starts, never inside one: once it is reached, or a task
    fails, no new task starts; tasks in flight finish (and are cached), then the error is raised.
    `stop` may be shared with other workers, so that one worker's error stops them all.
    """
    limit = asyncio.Semaphore(concurrency)
    stop = stop or threading.Event()
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
    if len(results) < len(tasks):
        raise _Stopped("stopped because another worker failed")
    return [results[task.id] for task in tasks]


class _Stopped(WikiskillError):
    """This worker stopped early because another one failed; that one's error is the one to report."""


def run_tasks(*args, **kwargs) -> list[Trajectory]:
    return asyncio.run(run_all(*args, **kwargs))


# -- several processes -----------------------------------------------------------------------


@dataclass(frozen=True)
class AgentRecipe:
    """What a worker process needs to build the task agent itself (everything here pickles)."""

    root: Path
    state_dir: Path
    config: Config
    skills: tuple[Skill, ...]
    seed: int | None = None
    shelf: WikiShelf | None = None

    def build(self, meter: Meter) -> Agent:
        from .benchmarks import load_benchmark
        from .team import Team

        benchmark = load_benchmark(self.config, self.root)
        return Team(self.config, benchmark, meter, self.state_dir).agent(list(self.skills), self.seed, self.shelf)


@dataclass(frozen=True)
class _Shard:
    recipe: AgentRecipe
    tasks: list[Task]
    concurrency: int
    cache: ResultCache | None
    spent: Usage


def run_in_workers(
    tasks: list[Task],
    recipe: AgentRecipe,
    workers: int,
    concurrency: int,
    meter: Meter,
    cache: ResultCache | None = None,
    on_done: Callable[[Trajectory], None] | None = None,
) -> list[Trajectory]:
    """Like `run_tasks`, over `workers` processes that share `concurrency` and the budget.

    Cached tasks are answered here; the rest are dealt round-robin to the workers, which stream
    each finished trajectory back (so progress and order work as in one process).
    """
    results: dict[str, Trajectory] = {}
    todo = []
    for task in tasks:
        cached = cache.get(task.id) if cache else None
        if cached is None:
            todo.append(task)
        else:
            results[task.id] = cached
            if on_done:
                on_done(cached)
    workers = max(1, min(workers, len(todo)))
    if todo:
        meter.check()
        context = _context(recipe)
        # shared by the workers: [calls, USD] spent, and a stop flag; kept referenced here until
        # the workers end, since collecting them would unlink their semaphores under the workers
        shared, stop = context.Array("d", 2), context.Event()
        lifeline = Lifeline(context)  # the workers end with this process, even when it is killed
        try:
            running = _start(context, todo, recipe, workers, concurrency, meter, cache, shared, stop, lifeline)
            _collect(running, results, meter, on_done)
        finally:
            lifeline.close()
    return [results[task.id] for task in tasks]


# litellm and the heaviest modules it imports on its first call (a missing one is skipped)
_LITELLM_MODULES = ["litellm", "litellm.proxy._types", "litellm.litellm_core_utils.logging_callback_manager"]


def _context(recipe: AgentRecipe) -> multiprocessing.context.BaseContext:
    """A forkserver: workers start from a clean, single-threaded process that has the heavy
    modules imported once, instead of forking this (threaded) process or re-importing per worker."""
    context = multiprocessing.get_context("forkserver")
    preload = ["wikiskill.runner", "wikiskill.team"]
    if recipe.config.role("agent").model != "offline":
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # inherited by the forkserver
        preload += _LITELLM_MODULES
    context.set_forkserver_preload(preload)
    return context


def _start(context, todo: list[Task], recipe: AgentRecipe, workers: int, concurrency: int, meter: Meter,
           cache: ResultCache | None, shared, stop,
           lifeline: Lifeline) -> list[tuple[multiprocessing.process.BaseProcess, Connection]]:
    spent = meter.spent()
    running = []
    for index in range(workers):
        share = concurrency // workers + (index < concurrency % workers)
        shard = _Shard(recipe, todo[index::workers], max(1, share), cache, spent)
        receive, send = context.Pipe(duplex=False)
        process = context.Process(target=_work, args=(shard, shared, stop, send, lifeline.end),
                                  name=f"wikiskill-worker-{index}")
        process.start()
        send.close()
        running.append((process, receive))
    return running


def _collect(running: list, results: dict[str, Trajectory], meter: Meter,
             on_done: Callable[[Trajectory], None] | None) -> None:
    """Read every worker's messages until all have ended; raise the first error any reported."""
    errors: list[BaseException] = []
    open_pipes = {receive: process for process, receive in running}
    try:
        while open_pipes:
            for receive in wait(list(open_pipes)):
                try:
                    kind, payload = receive.recv()
                except EOFError:
                    process = open_pipes.pop(receive)
                    process.join()
                    if process.exitcode:
                        errors.append(WikiskillError(f"{process.name} died (exit code {process.exitcode})"))
                    continue
                if kind == "done":
                    results[payload.task_id] = payload
                    if on_done:
                        on_done(payload)
                elif kind == "usage":
                    for role, usage in payload.items():
                        meter.add(role, usage)
                else:
                    errors.append(payload)
    finally:
        for process, _ in running:
            if process.is_alive():
                process.terminate()
            process.join()
    if errors:
        errors.sort(key=lambda error: (not isinstance(error, BudgetExceeded), isinstance(error, _Stopped)))
        raise errors[0]


def _work(shard: _Shard, shared, stop, send: Connection, parent: Connection) -> None:
    """A worker process: run its shard on its own event loop, streaming results to the parent."""
    watch_parent(parent)
    meter = Meter(shard.recipe.config.budget, spent=shard.spent, shared=shared)
    try:
        agent = shard.recipe.build(meter)
        run_tasks(shard.tasks, agent, shard.concurrency, meter, shard.cache,
                  lambda trajectory: send.send(("done", trajectory)), stop)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises it
        send.send(("error", _picklable(exc)))
    finally:
        send.send(("usage", meter.snapshot()))
        send.close()


def _picklable(exc: BaseException) -> BaseException:
    if isinstance(exc, WikiskillError):
        return type(exc)(*exc.args)
    if isinstance(exc, KeyboardInterrupt):
        return exc
    return WikiskillError(f"worker failed: {type(exc).__name__}: {exc}")
