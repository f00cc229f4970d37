"""Folders and files of this machine bind-mounted read-only into a task's container at the same
paths (a coding-agent CLI's install: the `node` binary and the global npm package folder), and
the agents that ask for them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class Mount:
    """`source` on this machine, seen read-only at the same path inside the container."""

    source: str

    def argv(self) -> list[str]:
        return ["--mount", f"type=bind,source={self.source},target={self.source},readonly"]


@runtime_checkable
class NeedsMounts(Protocol):
    """An agent whose program lives on this machine and must be mounted into each container."""

    def mounts(self) -> tuple[Mount, ...]:
        """What to mount into every task's container, read-only."""
