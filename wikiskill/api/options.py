"""What every command that runs tasks takes beside its own arguments (`RunOptions`); the command
starts from it by `command.command_session`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..benchmarks import SPLITS, Split
from ..core.errors import WikiskillError
from ..run.team import ModelFactory

if TYPE_CHECKING:
    from rich.console import Console


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """What every command that runs tasks (`evolve`, `eval`, `compare`, `audit`) takes beside its
    own arguments: the settings it overrides for this run (None keeps wikiskill.yaml's; `agent` is
    `agent.runner`), the console its progress is shown on (None: quiet), and the models of its
    roles when a host or a test supplies them (then no provider key is checked)."""

    model: str | None = None
    api_base: str | None = None
    concurrency: int | None = None
    workers: int | None = None
    executor: str | None = None
    agent: str | None = None
    console: Console | None = None
    model_factory: ModelFactory | None = None


def split_of(split: str) -> Split:
    if split not in SPLITS:
        raise WikiskillError(f"unknown split {split!r}: use val, test or train")
    return split
