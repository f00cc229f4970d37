"""Where a command's tasks run (config `executor`): one class per kind, each following
`protocols.Executor`, found by name in `EXECUTORS`.

Whatever the kind, the command owns the results: it answers cached tasks itself, starts a task
only while the budget allows, writes each result to the cache as it arrives and keeps the cost
ledger. Workers get small picklable recipes and hand back outcomes.
"""

from __future__ import annotations

from ...contracts.roles import Roles
from ...contracts.running import Executor, Place
from ...core.config import Config, ExecutorKind
from ...core.registry import Registry

EXECUTORS: Registry[Executor] = Registry("executor", Executor, {
    ExecutorKind.LOCAL: "wikiskill.run.executors.local:LocalLoop",
    ExecutorKind.PROCESSES: "wikiskill.run.executors.processes:ProcessPool",
    ExecutorKind.RAY: "wikiskill.run.executors.ray_actors:RayActors",
})
"""Each built-in kind's class, imported only when chosen; any other `executor` is a dotted path."""


def open_executor(config: Config, place: Place, team: Roles) -> Executor:
    """The executor `config.task_executor` names, with `config.workers` workers (started on first use)."""
    return EXECUTORS.load(config.task_executor).open(config, place, team)
