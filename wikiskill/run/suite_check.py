"""`wikiskill check-suite PATH`: every task of a Harbor suite played by the `oracle` (its
solution/solve.sh, which must score 1) and by `nop` (nothing, which must score 0), each in its own
container and verified as in a run; a task whose image does not build, or whose container or
verifier fails, is reported with the reason. Nothing is written but the build logs."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from enum import StrEnum

from ..benchmarks.harbor import ContainerSuite, HarborTask
from ..benchmarks.task_folders import CrashRule
from ..core.errors import InfrastructureError
from ..roles.reference_agent import NopAgent, OracleAgent
from .harbor_tasks import ContainerSetup, HarborTaskAgent


class CheckVerdict(StrEnum):
    """A task's verdict, one word for a table's cell."""

    OK = "ok"
    UNSOUND = "unsound"
    """Its reference does not score 1, or doing nothing does not score 0."""
    INFRA = "infra"
    """The machinery failed before a verdict (a build, a container)."""
    UNREADABLE = "unreadable"
    UNCHECKED = "unchecked"
    """It carries no reference solution."""


@dataclass(frozen=True)
class TaskCheck:
    """One task's verdict: `oracle` is its reference's score (a Harbor task's solve.sh, a task
    folder's solution/), `nop` the untouched task's."""

    task_id: str
    oracle: float | None = None
    nop: float | None = None
    problem: str | None = None
    """Why the task could not be checked (a build that failed, with its log's path), or what the
    oracle reported."""
    unreadable: bool = False
    """The task's folder cannot be read (`problem` says why)."""
    reference: bool = True
    """False: the task carries no reference solution, so it was not checked."""
    crash: CrashRule | None = None
    """A task folder's command check: what its crash in its own code on the agent's work is."""
    crash_reason: str = ""
    """Why that rule applies: the evidence about the check, or the suite's setting."""
    settled: bool = True
    """False: the machinery failed before a verdict (a check that could not run or timed out), so
    the verdict is not kept."""

    @property
    def sound(self) -> bool:
        return self.problem is None and self.oracle == 1.0 and self.nop == 0.0

    @property
    def verdict(self) -> CheckVerdict:
        if self.sound:
            return CheckVerdict.OK
        if not self.reference:
            return CheckVerdict.UNCHECKED
        if self.problem is not None and self.oracle is None:
            return CheckVerdict.UNREADABLE if self.unreadable else CheckVerdict.INFRA
        return CheckVerdict.UNSOUND

    @property
    def reason(self) -> str:
        """Why the task is not sound, whole."""
        if self.sound:
            return "sound"
        if not self.reference:
            return "no reference solution to check"
        if self.problem is not None:
            return self.problem
        return f"the reference must score 1 and doing nothing 0; they scored {self.oracle:g} and {self.nop:g}"


async def check_suite(suite: ContainerSuite, setup: ContainerSetup, concurrency: int = 2) -> list[TaskCheck]:
    gate = asyncio.Semaphore(concurrency)

    async def one(task: HarborTask) -> TaskCheck:
        async with gate:
            return await check_task(suite, setup, task)

    played = await asyncio.gather(*(one(task) for task in sorted(suite.by_id.values(), key=lambda task: task.id)))
    unreadable = [TaskCheck(task_id, problem=reason, unreadable=True) for task_id, reason in suite.unreadable.items()]
    return sorted([*played, *unreadable], key=lambda check: check.task_id)


async def check_task(suite: ContainerSuite, setup: ContainerSetup, task: HarborTask) -> TaskCheck:
    scores: dict[str, float] = {}
    problem = None
    oracle = OracleAgent()
    for agent in (oracle, NopAgent()):
        try:
            trajectory = await HarborTaskAgent(agent, suite, setup).run(suite.as_task(task, "train"))
        except InfrastructureError as exc:
            return TaskCheck(task.id, scores.get(OracleAgent.name), scores.get(NopAgent.name), str(exc))
        scores[agent.name] = trajectory.score
        if agent is oracle and trajectory.error:
            problem = trajectory.error
    return TaskCheck(task.id, scores[OracleAgent.name], scores[NopAgent.name], problem)
