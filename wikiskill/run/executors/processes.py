"""The `processes` executor: a pool of worker processes on this machine, one per command.

The pool starts on the command's first step and serves every later one. Workers start from a
forkserver that has the heavy modules imported once, and end with the command, even when it is
killed (`lifeline`).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import NoReturn

from ...contracts.roles import Roles
from ...contracts.running import AgentRecipe, Place
from ...core.config import OFFLINE_MODEL, Config
from ...core.lifeline import Lifeline, watch_parent
from ...core.parts import EXECUTOR
from ...roles.settings import Role
from .recipe import Assignment, TaskReport
from .remote import RemoteExecutor, WorkerDied
from .worker import WorkerRuntime

# litellm and the heaviest modules it imports on its first call (a missing one is skipped)
_LITELLM_MODULES = ["litellm", "litellm.proxy._types", "litellm.litellm_core_utils.logging_callback_manager"]
_EXIT_GRACE_S = 5.0


@dataclass
class _Worker:
    process: BaseProcess
    assignments: Connection
    outcomes: Connection
    running: int = field(default=0)


@EXECUTOR.builtin
class ProcessPool(RemoteExecutor):
    """A pool of `workers` local processes, started once per command, for when one process's CPU is the limit."""

    def __init__(self, place: Place, workers: int, preload_litellm: bool):
        self.place, self.size, self.preload_litellm = place, workers, preload_litellm
        self._workers: list[_Worker] = []
        self._lifeline: Lifeline | None = None
        self._prepared = ""

    @classmethod
    def open(cls, config: Config, place: Place, team: Roles) -> ProcessPool:
        return cls(place, config.workers, preload_litellm=config.role(Role.AGENT).model != OFFLINE_MODEL)

    def start(self) -> None:
        if self._workers:
            return
        context = _forkserver(self.preload_litellm)
        self._lifeline = Lifeline(context)
        for index in range(self.size):
            take, give = context.Pipe(duplex=False)
            collect, report = context.Pipe(duplex=False)
            process = context.Process(
                target=_serve, args=(self.place, take, report, self._lifeline.end), name=f"wikiskill-worker-{index}"
            )
            process.start()
            take.close()
            report.close()
            self._workers.append(_Worker(process, give, collect))

    def prepare(self, recipe: AgentRecipe) -> None:
        if recipe.key != self._prepared:
            for worker in self._workers:
                self._send(worker, ("recipe", recipe))
            self._prepared = recipe.key

    def submit(self, assignment: Assignment) -> None:
        worker = min(self._workers, key=lambda worker: worker.running)
        self._send(worker, ("task", assignment))
        worker.running += 1

    def finished(self) -> list[TaskReport]:
        by_pipe = {worker.outcomes: worker for worker in self._workers if worker.running}
        outcomes = []
        for pipe in wait(list(by_pipe)):
            worker = by_pipe[pipe]  # type: ignore[index]
            try:
                outcomes.append(worker.outcomes.recv())
            except EOFError:
                self._died(worker)
            worker.running -= 1
        return outcomes

    def _send(self, worker: _Worker, message: tuple[object, ...]) -> None:
        try:
            worker.assignments.send(message)
        except OSError:
            self._died(worker)

    def _died(self, worker: _Worker) -> NoReturn:
        worker.process.join()
        name, code = worker.process.name, worker.process.exitcode
        self.close()
        raise WorkerDied(f"{name} died (exit code {code})")

    def close(self) -> None:
        """Workers see their assignments end and exit; one that does not is terminated."""
        for worker in self._workers:
            worker.assignments.close()
        for worker in self._workers:
            worker.process.join(_EXIT_GRACE_S)
            if worker.process.is_alive():
                worker.process.terminate()
                worker.process.join()
            worker.outcomes.close()
        if self._lifeline is not None:
            self._lifeline.close()
        self._workers, self._lifeline, self._prepared = [], None, ""


def _forkserver(preload_litellm: bool) -> multiprocessing.context.ForkServerContext:
    """Workers fork from a clean, single-threaded process that imported the heavy modules once,
    instead of forking this (threaded) process or importing everything again in each."""
    context = multiprocessing.get_context("forkserver")
    preload = ["wikiskill.run.executors.processes", "wikiskill.run.team"]
    if preload_litellm:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # inherited by the forkserver
        preload += _LITELLM_MODULES
    context.set_forkserver_preload(preload)
    return context


def _serve(place: Place, assignments: Connection, outcomes: Connection, parent: Connection) -> None:
    """A worker process: run each assignment as it arrives, on one event loop, until the pool closes."""
    watch_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the command's: it closes the pool
    asyncio.run(_serve_loop(WorkerRuntime(place), assignments, outcomes))


async def _serve_loop(runtime: WorkerRuntime, assignments: Connection, outcomes: Connection) -> None:
    loop = asyncio.get_running_loop()
    closed = asyncio.Event()
    running: set[asyncio.Task[None]] = set()

    async def run(assignment: Assignment) -> None:
        outcomes.send(await runtime.run(assignment))

    def receive() -> None:
        try:
            kind, payload = assignments.recv()
        except EOFError:
            loop.remove_reader(assignments.fileno())
            closed.set()
            return
        if kind == "recipe":
            runtime.prepare(payload)
        else:
            task = loop.create_task(run(payload))
            running.add(task)
            task.add_done_callback(running.discard)

    loop.add_reader(assignments.fileno(), receive)
    await closed.wait()
