"""Where a command's tasks run (config `executor`): one class per kind, each following
`contracts.running.Executor`, registered by name in `core.parts.EXECUTOR`.

Whatever the kind, the command owns the results: it answers cached tasks itself, starts a task
only while the budget allows, writes each result to the cache as it arrives and keeps the cost
ledger. Workers get small picklable recipes and hand back outcomes.
"""

from __future__ import annotations

from ...contracts.roles import Roles
from ...contracts.running import EXECUTORS, Executor, Place
from ...core.config import Config


def open_executor(config: Config, place: Place, team: Roles) -> Executor:
    """The executor `config.task_executor` names, with `config.workers` workers (started on first use)."""
    executor = EXECUTORS.load(config.task_executor)
    return executor.open(config, place, team)
