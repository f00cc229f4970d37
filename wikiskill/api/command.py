"""How a command that runs tasks starts, the one way every such command starts: its settings with
the options' overrides, the pre-flight that refuses every problem of them in one line, the trace,
the workspace held (the lock, then what a killed writer left finished) and the harness loaded, in
that order, each only once the one before it stands (`command_session`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import replace

from ..core.config import CONFIG_FILE, Config
from ..loop.harness import Harness
from ..run.preflight import preflight
from ..store.settings import load_config
from ..store.workspace import Workspace
from ..telemetry.spans import command as traced_command
from .options import RunOptions


@contextmanager
def command_session(
    ws: Workspace,
    options: RunOptions,
    command: str,
    *,
    held: AbstractContextManager[object] | None = None,
    runs: bool = True,
    traced: bool = True,
    **attributes: object,
) -> Iterator[Harness]:
    """The harness of the command `command` on `ws` under `options`, closed on the way out.
    `held`: what holds the workspace while the command runs (`ws.writing(...)`, or evolve's
    `holding`), taken before the suite loads. `runs=False`: a command that runs no task (an
    estimate), checked as one and loaded with no progress shown. `traced`: inside the command's
    trace, with `attributes`."""
    config = checked_config(ws, options, runs=runs)
    with ExitStack() as stack:
        if traced:
            stack.enter_context(traced_command(command, config.telemetry, benchmark=config.benchmark, **attributes))
        if held is not None:
            stack.enter_context(held)
        yield stack.enter_context(open_harness(ws, config, options if runs else replace(options, console=None)))


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


def checked_config(ws: Workspace, options: RunOptions, runs: bool = True) -> Config:
    """The workspace's settings with the command's overrides, through the pre-flight: every
    problem found (a missing provider key, an agent runner that cannot be loaded or cannot play
    the suite, ...) is refused here, before any progress bar, lock or file, in one line. `runs`:
    checked as a command that runs tasks needs them (else as an estimate or a reading audit)."""
    config = overridden(ws, options)
    source = "--agent" if options.agent else CONFIG_FILE
    preflight(config, ws.root, runner_source=source, runs=runs, keys=options.model_factory is None)
    return config


def open_harness(ws: Workspace, config: Config, options: RunOptions) -> Harness:
    console = options.console
    if console is None:
        return Harness.open(ws, config, None, options.model_factory)
    from ..loop.progress import RichReporter

    with console.status(f"loading the {config.benchmark} benchmark"):  # shown at once, gone when done
        return Harness.open(ws, config, RichReporter(console), options.model_factory)
