"""What every command that runs tasks takes beside its own arguments (`RunOptions`), and the
settings, pre-flight and harness such a command builds from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..benchmarks import SPLITS, Split
from ..core.config import CONFIG_FILE, Config
from ..core.errors import WikiskillError
from ..loop.harness import Harness
from ..run.preflight import preflight
from ..run.team import ModelFactory
from ..store.settings import load_config
from ..store.workspace import Workspace

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


def overridden(ws: Workspace, options: RunOptions) -> Config:
    """The workspace's settings with the command's overrides."""
    return load_config(ws.root).with_overrides(
        model=options.model,
        api_base=options.api_base,
        concurrency=options.concurrency,
        workers=options.workers,
        executor=options.executor,
        runner=options.agent,
    )


def checked_config(ws: Workspace, options: RunOptions) -> Config:
    """The workspace's settings with the command's overrides, through the pre-flight: every
    problem found (a missing provider key, an agent runner that cannot be loaded or cannot play
    the suite, ...) is refused here, before any progress bar, lock or file, in one line."""
    config = overridden(ws, options)
    preflight(config, ws.root, runner_source=runner_source(options), keys=options.model_factory is None)
    return config


def runner_source(options: RunOptions) -> str:
    return "--agent" if options.agent else CONFIG_FILE


def open_harness(ws: Workspace, config: Config, options: RunOptions) -> Harness:
    console = options.console
    if console is None:
        return Harness(ws, config, None, options.model_factory)
    from ..loop.progress import RichReporter

    with console.status(f"loading the {config.benchmark} benchmark"):  # shown at once, gone when done
        return Harness(ws, config, RichReporter(console), options.model_factory)


def split_of(split: str) -> Split:
    if split not in SPLITS:
        raise WikiskillError(f"unknown split {split!r}: use val, test or train")
    return split
