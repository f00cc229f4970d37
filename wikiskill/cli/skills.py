"""The commands about the skills and what serves them: `skills` (and `skills show`), `prompt`,
`export`, `mcp`, `lint`, `search`, `watch`, `ingest`, `export-trajectories`."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from .. import api
from ..knowledge.settings import SkillsMode
from ..store.traces import TrajectorySplit
from .common import console, errors, print_table, workspace_of


def skills(ctx: typer.Context, ref: str = typer.Option("main", "--ref", help="Git ref to read skills at.")) -> None:
    """List the active skills, or show one (`wikiskill skills show NAME`).

    Each skill with the train prompts it reached, the train tasks whose CLI agent loaded it, and
    the tasks its changes helped and hurt."""
    if ctx.invoked_subcommand is not None:
        return
    ws = workspace_of(ctx)
    usage = api.skill_usage(ws, ref)
    rows = [
        [
            skill.name,
            " ".join(skill.description.split()),
            str(skill.metadata.get("wikiskill-round", "")),
            *(str(getattr(usage.get(skill.name), key, 0)) for key in ("prompts", "loads", "helped", "hurt")),
        ]
        for skill in api.load_skills(ws, ref)
    ]
    print_table(["name", "description", "round", "prompts", "loaded", "helped", "hurt"], rows, wrapped=(1,))


def skills_show(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The skill to print."),
    ref: str = typer.Option("main", "--ref", help="Git ref to read the skill at."),
) -> None:
    """Print one skill's SKILL.md and PURPOSE.md."""
    sys.stdout.write(api.show_skill(workspace_of(ctx), name, ref))


def prompt(
    ctx: typer.Context,
    task: str = typer.Option("", "--task", help="Task text (used by --mode retrieve)."),
    mode: str | None = typer.Option(None, "--mode", help=f"{', '.join(SkillsMode)} (default: wikiskill.yaml)."),
    ref: str = typer.Option("main", "--ref", help="Git ref to read skills at."),
) -> None:
    """Print the skills block to paste into any agent's system prompt.

    With no skills at the ref the block is empty: nothing is printed, and stderr says so."""
    ws = workspace_of(ctx)
    block = api.prompt(ws, task=task, mode=mode, ref=ref)
    if not api.load_skills(ws, ref):
        errors.print(f"no skills at {ref}: the skills block is empty", markup=False, highlight=False, soft_wrap=True)
    sys.stdout.write(block)


def export_command(
    ctx: typer.Context,
    dest: Path = typer.Argument(
        ...,
        help="agents, harbor: the folder to write the skill folders into; claude, "
        "codex: the project (or home) folder whose host skills folder to write.",
    ),
    ref: str = typer.Option("main", "--ref", help="Export the skills at this git ref."),
    target: str = typer.Option(
        "agents",
        "--target",
        help="agents (DIR/<name>/), claude (DIR/.claude/skills/), "
        "codex (DIR/.agents/skills/) or harbor (DIR/<name>/, "
        "for `harbor run --skill DIR`).",
    ),
) -> None:
    """Write the accepted skills as Agent Skills folders (SKILL.md and every file they ship).

    Into DEST (`agents`; `harbor`, the folder `harbor run --skill DEST` takes), or into the folder
    Claude Code (`DEST/.claude/skills`) or Codex (`DEST/.agents/skills`) reads under the project or
    home folder DEST. Links that would leave
    the skills folder (PURPOSE.md's links into the wiki) are dropped, their text kept."""
    result = api.export(workspace_of(ctx), dest, ref, target)
    for name, reason in result.skipped.items():
        errors.print(f"skipped {name}: {reason}", style="yellow", markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"Exported {len(result.skills)} skill(s) from {ref} ({result.commit[:10]}) to {result.dest}: "
        f"{len(result.written)} file(s) written, {len(result.removed)} removed.",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def mcp_command(
    ctx: typer.Context,
    ref: str = typer.Option("main", "--ref", help="Serve the skills at this git ref, followed live."),
    transport: str = typer.Option(
        "stdio",
        "--transport",
        help="stdio (a host starts this command) or http (streamable HTTP at http://HOST:PORT/mcp).",
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="http: the address to listen on."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="http: the port to listen on."),
) -> None:
    """Serve the skills to MCP hosts: list_skills, load_skill, search, skills_prompt, skill://NAME.

    Tools `list_skills`, `load_skill`, `search`, `skills_prompt` and a `skill://NAME` resource per
    skill, read live at the tip of --ref on every request."""
    api.serve_mcp(workspace_of(ctx), ref, transport, host, port)


def lint_command(ctx: typer.Context) -> None:
    """Check SKILL.md files, Markdown links and the wiki index in the working tree; exit 1 on problems.

    Every SKILL.md against the Agent Skills rules, every wiki link, the index against the pages.

    Skills that overlap are reported as warnings, which do not fail the check."""
    problems = api.lint(workspace_of(ctx))
    for problem in problems:
        typer.echo(str(problem))
    if any(not problem.warning for problem in problems):
        raise typer.Exit(1)
    if not problems:
        typer.echo("no problems")


def search_command(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="Words to look for."),
    corpus: str = typer.Option(
        "wiki", "--in", help="wiki (pattern pages), skills, or traces (latest train traces and ingested sessions)."
    ),
    limit: int = typer.Option(10, "--limit", min=1, help="Most hits to show."),
    ref: str = typer.Option("main", "--ref", help="Search at this git ref."),
) -> None:
    """Ranked hits (BM25) with path and the best-matching line."""
    hits = api.search(workspace_of(ctx), query, corpus, ref, limit)
    for hit in hits:
        typer.echo(f"{hit.score:6.2f}  {hit.path}  {hit.snippet}")
    if not hits:
        typer.echo("no matches")


def watch_command(
    ctx: typer.Context,
    commit: bool = typer.Option(False, "--commit", help="Commit edits that add no lint problem as `human` steps."),
) -> None:
    """Lint skills/ and wiki/ on every save until Ctrl-C; with --commit, commit the valid edits."""
    import time

    from rich.markup import escape

    from ..integrations.watch import WatchReport

    ws = workspace_of(ctx)

    def show(report: WatchReport) -> None:
        if report.changed:
            console.print(
                f"[dim]{time.strftime('%H:%M:%S')}[/dim] changed: {', '.join(report.changed)}",
                highlight=False,
                soft_wrap=True,
            )
        for problem in report.problems:
            console.print(f"  [red]✗[/red] {escape(str(problem))}", highlight=False, soft_wrap=True)
        if not report.problems:
            console.print("  [green]✓[/green] no problems", highlight=False)
        if report.committed:
            console.print(
                f"  committed {report.committed[:10]} as a human step: {escape(', '.join(report.committed_paths))}",
                highlight=False,
                soft_wrap=True,
            )
        if report.held_back:
            held_back = escape(", ".join(report.held_back))
            console.print(
                f"  [yellow]not committed (they add problems):[/yellow] {held_back}", highlight=False, soft_wrap=True
            )
        if report.note:
            console.print(f"  [yellow]not committed:[/yellow] {escape(report.note)}", highlight=False, soft_wrap=True)

    what = "linting and committing valid edits" if commit else "linting"
    console.print(
        f"Watching skills/ and wiki/ in {escape(str(ws.root))} ({what}); Ctrl-C stops.", highlight=False, soft_wrap=True
    )
    try:
        api.watch(ws, show, commit=commit)
    except KeyboardInterrupt:
        console.print("stopped")


def ingest_command(
    ctx: typer.Context,
    files: list[Path] = typer.Argument(..., help="Session transcript or ATIF files, or Harbor job folders."),
    session_format: str = typer.Option(
        ...,
        "--format",
        help="claude-code (a session .jsonl from ~/.claude/projects/<project>/), openai-messages (a JSON "
        "list of chat messages), atif (an ATIF v1.4 to v1.8 trajectory.json) or harbor-job (a `harbor run` "
        "job folder: each trial's agent/trajectory.json, its outcome its verifier's reward).",
    ),
    outcome: str | None = typer.Option(
        None,
        "--outcome",
        help="success, failure or unknown (the default): how the sessions ended (unknown ones are sampled "
        "with the failures); not for harbor-job, whose trials' rewards say it.",
    ),
) -> None:
    """Import real agent sessions into raw/ so the next round's maintainer and proposer learn from them.

    They go into `raw/rNNN/ingested/` for the next round, secrets scrubbed, in one `ingest` commit.
    A malformed file is refused with its name (and line) and nothing is written; a session ingested
    before is skipped. A Harbor trial of a task in the suite's val or test split is refused, named."""
    result = api.ingest(workspace_of(ctx), files, session_format, outcome)
    for path in result.skipped:
        console.print(f"skipped {path}: already ingested", markup=False, highlight=False, soft_wrap=True)
    if result.commit is None:
        console.print("Nothing new to ingest.")
        return
    console.print(
        f"Ingested {len(result.added)} session(s) as raw/r{result.round:03d}/ingested/ "
        f"({', '.join(t.task_id for t in result.added)}) in {result.commit[:10]}; round {result.round} "
        "learns from them.",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def export_trajectories_command(
    ctx: typer.Context,
    round_number: int = typer.Argument(..., help="The round whose trajectories to write."),
    out: Path = typer.Option(..., "--out", help="The folder to write <split>/<task id>.json into."),
    split: list[TrajectorySplit] | None = typer.Option(
        None, "--split", help="train or ingested (repeatable); both when left out. Val and test keep no trajectories."
    ),
) -> None:
    """Write a round's trajectories as ATIF v1.8 (Harbor's trajectory format) for other tools.

    Every train task's trajectory and every session ingested for the round, each validated by the
    `atif` package's models before any file is written; `ingest --format atif` reads them back."""
    written = api.export_trajectories(workspace_of(ctx), round_number, out, split or None)
    console.print(
        f"Wrote {len(written)} ATIF trajectory file(s) of round {round_number} under {out}.",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
