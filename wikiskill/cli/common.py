"""What every command shares: the Typer app, one-line errors, the options several commands take,
the workspace of `-C`, and how a score or a long value is printed."""

from __future__ import annotations

import functools
import inspect
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from typer.core import TyperCommand, TyperGroup, TyperOption

from .. import __version__, api
from ..core.errors import WikiskillError
from ..core.parts import CLI_PRESET
from ..core.redact import scrub

if TYPE_CHECKING:
    # typer 0.2x vendors click and names the Context its groups are invoked with only here
    from typer._click import Context as ClickContext


class _Console(Console):
    """Off a terminal (piped, redirected) a line of text is printed whole, so a sentence is never
    split where an 80-column default width happens to fall; on a terminal rich wraps it at the
    terminal's width. Tables are laid out as ever."""

    def print(self, *objects: Any, soft_wrap: bool | None = None, **options: Any) -> None:
        if soft_wrap is None and not self.is_terminal and all(isinstance(each, str) for each in objects):
            soft_wrap = True
        super().print(*objects, soft_wrap=soft_wrap, **options)


@functools.cache
def command_name() -> str:
    """The wikiskill command as the user can run it, for the commands a hint prints: `wikiskill`
    where that is what PATH finds, else the running executable's path as it was started
    (`.venv/bin/wikiskill`), or the interpreter with `-m wikiskill`."""
    started = sys.argv[0]
    if Path(started).name != "wikiskill":  # `python -m wikiskill`, or the CLI called from a program
        return f"{shlex.quote(sys.executable)} -m wikiskill"
    on_path = shutil.which("wikiskill")
    if on_path is not None and Path(on_path).resolve() == Path(started).resolve():
        return "wikiskill"
    return shlex.quote(started)


errors = _Console(stderr=True)
console = _Console()
MEASURING_WIDTH = 100_000
"""Wide enough that rich measures a table's own narrowest width, not the terminal's."""


def _flags_take_no_value(params: list[Any]) -> list[Any]:
    """`params` with every flag's metavar empty, so help lists `--dry-run`, `--version` and
    `--help` without a `<bool>`, as if they took a value."""
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""
    return params


class Command(TyperCommand):
    """A command whose help shows flags as flags (see `_flags_take_no_value`)."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _flags_take_no_value(super().get_params(ctx))


class Commands(TyperGroup):
    """Print any error a user can cause as one line and exit 1, never a traceback; show flags as
    flags in help."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _flags_take_no_value(super().get_params(ctx))

    def invoke(self, ctx: ClickContext) -> object:
        try:
            return super().invoke(ctx)
        except WikiskillError as exc:
            message = scrub(" ".join("; ".join([str(exc), *_notes(exc)]).split()))  # one line, and never a key
            errors.print(f"error: {message}", style="red", markup=False, highlight=False, soft_wrap=True)
            ctx.exit(1)
        except KeyboardInterrupt as exc:
            resume = _notes(exc) or ["run the same command again to resume"]
            errors.print("; ".join(["interrupted", *resume]), highlight=False)
            ctx.exit(130)


def _notes(exc: BaseException) -> list[str]:
    """What the library added to an error on its way up (`add_note`): what a stopped evaluation kept."""
    return list(getattr(exc, "__notes__", []))


app = typer.Typer(
    cls=Commands,
    help="Evolve an LLM agent's skills from its own experience; every change is git history.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

ModelOption = typer.Option(None, "--model", help="litellm model string for every role (overrides wikiskill.yaml).")
ApiBaseOption = typer.Option(None, "--api-base", help="Base URL of an OpenAI-compatible server.")
AgentOption = typer.Option(
    None,
    "--agent",
    help="Who plays the tasks: builtin, python:MODULE:FUNCTION, "
    f"{', '.join(CLI_PRESET.names())}, a CLI preset's dotted path, or oracle or "
    "nop on a Harbor suite (overrides agent.runner).",
)
ConcurrencyOption = typer.Option(None, "--concurrency", min=1, help="Tasks run at the same time.")
WorkersOption = typer.Option(
    None,
    "--workers",
    min=1,
    help="Worker processes (--executor processes, the default above 1) or Ray actors "
    "(--executor ray) that share --concurrency, each with its own event loop.",
)
ExecutorOption = typer.Option(
    None,
    "--executor",
    help="Where tasks run: local (this process), processes (a pool of --workers "
    "processes), ray (Ray actors; ray.address / RAY_ADDRESS, else a local Ray) "
    "or the dotted path of an executor class (package.module:Class); "
    "default: processes with --workers above 1, else local.",
)
RUN_OPTIONS: dict[str, tuple[type, object]] = {
    "model": (str, ModelOption),
    "api_base": (str, ApiBaseOption),
    "concurrency": (int, ConcurrencyOption),
    "workers": (int, WorkersOption),
    "executor": (str, ExecutorOption),
    "agent": (str, AgentOption),
}
"""The options of a command that runs tasks, by the `api.RunOptions` field each one fills."""


def run_options(*names: str) -> Callable[[Callable[..., object]], Callable[..., object]]:
    """Give a command the options of `RUN_OPTIONS` (those `names`, else all) in place of its
    `options` parameter, which receives them as one `api.RunOptions` with progress on the console."""
    names = names or tuple(RUN_OPTIONS)

    def decorate(command: Callable[..., object]) -> Callable[..., object]:
        signature = inspect.signature(command, eval_str=True)
        added = [_keyword(name, *RUN_OPTIONS[name]) for name in names]
        parameters = [
            replaced
            for parameter in signature.parameters.values()
            for replaced in (added if parameter.name == "options" else [parameter.replace(kind=parameter.KEYWORD_ONLY)])
        ]

        @functools.wraps(command)
        def with_options(**values: object) -> object:
            chosen: dict[str, Any] = {name: values.pop(name) for name in names}
            return command(**values, options=api.RunOptions(console=console, **chosen))

        with_options.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        with_options.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
        return with_options

    return decorate


def _keyword(name: str, kind: type, option: object) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=kind | None)


def help_text(command: Callable[..., object]) -> str:
    """A command's docstring as `--help` shows it: each paragraph one line, which the terminal
    then wraps at its width (a docstring's own line breaks would split sentences mid-way)."""
    paragraphs = inspect.cleandoc(command.__doc__ or "").split("\n\n")
    return "\n\n".join(" ".join(paragraph.split()) for paragraph in paragraphs)


def _print_version(asked: bool) -> None:
    if asked:
        plain(f"wikiskill {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    directory: Path | None = typer.Option(None, "-C", help="Workspace directory (default: the one you are in)."),
    version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_print_version, help="Print wikiskill's version and exit."
    ),
) -> None:
    ctx.obj = directory


def workspace_of(ctx: typer.Context) -> api.Workspace:
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


def print_table(
    headers: list[str],
    rows: list[list[str]],
    names: tuple[int, ...] = (0,),
    wrapped: tuple[int, ...] = (),
    **options: object,
) -> None:
    """A table whose `names` columns (identities, such as skill names) are never cut or split.

    On a terminal wide enough it is a rich table in which only the `wrapped` columns wrap;
    otherwise (piped, redirected, or too narrow) plain aligned lines, one per row, as wide as
    their cells."""
    widths = [max([len(header), *(len(row[index]) for row in rows)]) for index, header in enumerate(headers)]
    table = Table(*headers, **options)  # type: ignore[arg-type]
    for index, column in enumerate(table.columns):
        column.no_wrap = index not in wrapped
        if index in names:
            column.min_width = widths[index]
    for row in rows:
        table.add_row(*row)
    if (
        console.is_terminal
        and Measurement.get(console, console.options.update_width(MEASURING_WIDTH), table).minimum <= console.width
    ):
        console.print(table)
        return
    for row in [headers, *rows]:
        plain("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
