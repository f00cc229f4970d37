"""What every command shares: the Typer app, one-line errors, the options several commands take,
the workspace of `-C`, and how a score or a long value is printed."""

from __future__ import annotations

from pathlib import Path

import click
import typer
from rich.console import Console
from typer.core import TyperGroup

from .. import api
from ..core.errors import WikiskillError
from ..core.parts import CLI_PRESETS
from ..core.redact import scrub

errors = Console(stderr=True)
console = Console()


class _Commands(TyperGroup):
    """Print any error a user can cause as one line and exit 1, never a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except WikiskillError as exc:
            message = scrub(" ".join(str(exc).split()))  # one line, and never a key
            errors.print(f"error: {message}", style="red", markup=False, highlight=False, soft_wrap=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            errors.print("interrupted; run the same command again to resume", highlight=False)
            ctx.exit(130)


app = typer.Typer(
    cls=_Commands,
    help="Evolve an LLM agent's skills from its own experience; every change is git history.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

ModelOption = typer.Option(None, "--model", help="litellm model string for every role (overrides wikiskill.yaml).")
ApiBaseOption = typer.Option(None, "--api-base", help="Base URL of an OpenAI-compatible server.")
AgentOption = typer.Option(None, "--agent",
                           help="Who plays the tasks: builtin, python:MODULE:FUNCTION, "
                                f"{', '.join(CLI_PRESETS.names())} or a CLI preset's dotted path "
                                "(overrides agent.runner).")
ConcurrencyOption = typer.Option(None, "--concurrency", min=1, help="Tasks run at the same time.")
WorkersOption = typer.Option(None, "--workers", min=1,
                             help="Worker processes (--executor processes, the default above 1) or Ray actors "
                                  "(--executor ray) that share --concurrency, each with its own event loop.")
ExecutorOption = typer.Option(None, "--executor",
                              help="Where tasks run: local (this process), processes (a pool of --workers "
                                   "processes), ray (Ray actors; ray.address / RAY_ADDRESS, else a local Ray) "
                                   "or the dotted path of an executor class (package.module:Class); "
                                   "default: processes with --workers above 1, else local.")


@app.callback()
def main(ctx: typer.Context, directory: Path | None = typer.Option(
        None, "-C", help="Workspace directory (default: the one you are in).")) -> None:
    ctx.obj = directory


def workspace_of(ctx: typer.Context):
    """The workspace `-C` names, else the one the current folder is in."""
    return api.open_workspace(ctx.find_root().obj)


def score_text(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def shorten(value: object) -> str:
    """A value on one line, at most 40 characters."""
    text = " ".join(str(value if value is not None else "").split())
    return text if len(text) <= 40 else text[:39] + "…"


def plain(text: str) -> None:
    """Print `text` as it is: no markup, no highlighting, no wrapping."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)
