"""Folders and files of this machine bind-mounted read-only into a task's container at the same
paths (a coding-agent CLI's install: the `node` binary and the global npm package folder), and
the agents that ask for them (`base.NeedsMounts`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mount:
    """`source` on this machine, seen read-only at the same path inside the container."""

    source: str

    def argv(self) -> list[str]:
        return ["--mount", f"type=bind,source={self.source},target={self.source},readonly"]
