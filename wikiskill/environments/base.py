"""The contract every task environment keeps: the built-in agent's commands, a Python runner's
handle, the oracle and the verifier all go through it, so where a task runs (a folder on this
machine, a container) is the environment's business alone."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from .mounts import Mount
from .output import ShellResult


@runtime_checkable
class TaskEnvironment(Protocol):
    """One task's place to work, made fresh for it and closed after it."""

    workdir: str
    """Where commands start (a host path, or a path inside the container such as `/app`)."""
    sandboxed: bool
    """Whether commands are confined to the task (bubblewrap, a container)."""

    async def run(self, command: str, timeout_s: float, output_chars: int) -> ShellResult:
        """`command` run with bash in `workdir`, killed (with what it started) after `timeout_s`,
        its output cut to `output_chars`."""

    async def copy_in(self, source: Path, destination: str) -> None:
        """Copy the file or folder `source` from this machine to `destination` (absolute, or
        relative to `workdir`)."""

    async def copy_out(self, source: str, destination: Path) -> None:
        """Copy `source` (absolute, or relative to `workdir`) out to `destination` on this machine."""

    async def close(self) -> None:
        """Remove the environment and whatever still runs in it."""


@runtime_checkable
class NeedsMounts(Protocol):
    """An agent whose program lives on this machine and must be mounted into each container."""

    def mounts(self) -> tuple[Mount, ...]:
        """What to mount into every task's container, read-only."""
