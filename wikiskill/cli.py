"""The `wikiskill` command: thin over the library (parse, build objects, call, print)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import click
import typer
from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from typer.core import TyperGroup

from . import api
from .core.errors import WikiskillError
from .core.redact import scrub

errors = Console(stderr=True)


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
skills_app = typer.Typer(invoke_without_command=True)
app.add_typer(skills_app, name="skills")
console = Console()

ModelOption = typer.Option(None, "--model", help="litellm model string for every role (overrides wikiskill.yaml).")
ApiBaseOption = typer.Option(None, "--api-base", help="Base URL of an OpenAI-compatible server.")
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
def main(ctx: typer.Context, directory: Optional[Path] = typer.Option(
        None, "-C", help="Workspace directory (default: the one you are in).")) -> None:
    ctx.obj = directory


def _workspace(ctx: typer.Context):
    return api.open_workspace(ctx.find_root().obj)


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


@app.command()
def init(
    path: Path = typer.Argument(..., help="New or empty directory for the workspace."),
    benchmark: str = typer.Option("textworld-cooking", "--benchmark", "-b",
                                  help="Any name `wikiskill benchmarks` lists, e.g. textworld-cooking or jsonl:DIR."),
    model: str = typer.Option("offline", "--model", help="litellm model string; `offline` needs no key."),
    api_base: Optional[str] = ApiBaseOption,
    train: Optional[int] = typer.Option(None, "--train", min=1, help="Train tasks (generated benchmarks)."),
    val: Optional[int] = typer.Option(None, "--val", min=1, help="Validation tasks (generated benchmarks)."),
    test: Optional[int] = typer.Option(None, "--test", min=1, help="Test tasks (generated benchmarks)."),
    concurrency: int = typer.Option(4, "--concurrency", min=1, help="Tasks run at the same time."),
) -> None:
    """Create a workspace: config, empty wiki and skills, a git repository on branch main.

    Refuses a non-empty directory that is not a workspace."""
    ws = api.init_workspace(path, benchmark=benchmark, model=model, api_base=api_base,
                            train=train, val=val, test=test, concurrency=concurrency)
    console.print(f"Created workspace [bold]{ws.root}[/bold] ({benchmark}, model {model}).")
    console.print(f"Next: [bold]wikiskill -C {path} evolve --rounds 3[/bold]")


@app.command()
def evolve(
    ctx: typer.Context,
    rounds: int = typer.Option(3, "--rounds", "-n", min=1,
                               help="Completed rounds for this run (a resumed run counts the rounds it already did)."),
    model: Optional[str] = ModelOption,
    api_base: Optional[str] = ApiBaseOption,
    concurrency: Optional[int] = ConcurrencyOption,
    workers: Optional[int] = WorkersOption,
    executor: Optional[str] = ExecutorOption,
    commit_human_edits: bool = typer.Option(False, "--commit-human-edits",
                                            help="Commit uncommitted edits under skills/ and wiki/ as a human step."),
) -> None:
    """Run rounds of rollout -> maintain -> propose -> validate -> gate (resumes an interrupted run)."""
    ws = _workspace(ctx)
    result = api.evolve(ws, rounds, model=model, api_base=api_base, concurrency=concurrency, workers=workers,
                        executor=executor, commit_human_edits=commit_human_edits, console=console)
    note = " (stopped early: the incumbent scores 1.0)" if result.stopped_early else ""
    console.print(f"Done: {result.rounds_completed} round(s) completed{note}; "
                  f"incumbent val score {result.incumbent:.3f}. See `wikiskill log`.")


@app.command("eval")
def eval_command(
    ctx: typer.Context,
    split: str = typer.Option("val", "--split", help="val, test or train."),
    ref: str = typer.Option("main", "--ref", help="Evaluate the skills at this git ref."),
    model: Optional[str] = ModelOption,
    api_base: Optional[str] = ApiBaseOption,
    concurrency: Optional[int] = ConcurrencyOption,
    workers: Optional[int] = WorkersOption,
    executor: Optional[str] = ExecutorOption,
) -> None:
    """Score the skills on main (or --ref) on a split and print a per-task table. Writes nothing to git.

    Scored as the gate does (`gate.repeats` runs per task); the evaluation's fingerprint is printed."""
    ws = _workspace(ctx)
    evaluated = api.evaluate(ws, split, ref=ref, model=model, api_base=api_base, concurrency=concurrency,
                             workers=workers, executor=executor, console=console)
    scores = evaluated.evaluation.scores
    table = Table("task", "score", "prediction", "expected", title=f"{split}: {len(scores)} tasks")
    failed = []
    for trajectory in evaluated.runs[0]:
        row = trajectory.outcome()
        table.add_row(row["id"], f"{scores[row['id']]:.3f}", _short(row["prediction"]), _short(row["expected"]))
        if row["error"]:
            failed.append(f"{row['id']}: {row['error']}")
    console.print(table)
    for line in failed:
        console.print(line, markup=False, highlight=False)
    repeats = f" (mean of {len(evaluated.runs)} repeats per task)" if len(evaluated.runs) > 1 else ""
    e = evaluated.evaluation
    console.print(f"mean score {e.mean:.3f} ({e.solved}/{e.n} solved){repeats}; fingerprint {e.fingerprint}")


@app.command("compare")
def compare_command(
    ctx: typer.Context,
    ref_a: str = typer.Argument(..., help="The reference skills (e.g. baseline, round/003, a rejected/... tag)."),
    ref_b: str = typer.Argument(..., help="The skills compared with them (e.g. main)."),
    split: str = typer.Option("val", "--split", help="val, test or train."),
    model: Optional[str] = ModelOption,
    api_base: Optional[str] = ApiBaseOption,
    concurrency: Optional[int] = ConcurrencyOption,
    workers: Optional[int] = WorkersOption,
    executor: Optional[str] = ExecutorOption,
) -> None:
    """Compare two refs' skills task by task, with the mean difference and its interval.

    Each task is fixed, broken, better, worse or the same; the interval is 95%. Evaluations git
    records, or the result cache holds, under the current fingerprint are not rerun."""
    from .history.compare import Change

    result = api.compare(_workspace(ctx), ref_a, ref_b, split, model=model, api_base=api_base,
                         concurrency=concurrency, workers=workers, executor=executor, console=console)
    table = Table("task", ref_a, ref_b, "change", title=f"{split}: {ref_a} → {ref_b}")
    for row in result.rows:
        table.add_row(row.task, f"{row.a:.3f}", f"{row.b:.3f}", row.change.value)
    console.print(table)
    counts = ", ".join(f"{result.count(change)} {change.value}" for change in Change)
    low, high = result.interval
    console.print(f"{ref_a} {result.a.mean:.3f} → {ref_b} {result.b.mean:.3f}: mean difference "
                  f"{result.mean_diff:+.4f}, {result.confidence:.0%} interval [{low:+.4f}, {high:+.4f}] "
                  f"(n = {len(result.rows)}; {counts})", markup=False, highlight=False, soft_wrap=True)


def _short(value: object) -> str:
    text = " ".join(str(value if value is not None else "").split())
    return text if len(text) <= 40 else text[:39] + "…"


@app.command("audit")
def audit_command(
    ctx: typer.Context,
    rerun: bool = typer.Option(False, "--rerun", help="Evaluate every merge again from scratch (model calls)."),
    model: Optional[str] = ModelOption,
    api_base: Optional[str] = ApiBaseOption,
    concurrency: Optional[int] = ConcurrencyOption,
) -> None:
    """Check that every accepted merge is the evidence its commit claims; exit 1 on a problem.

    Each merge must record an evaluation of exactly its own skills, compared with an
    incumbent evaluated under the same setup, with the claimed score in its results file;
    --rerun also evaluates each merge again under the current settings."""
    report = api.audit(_workspace(ctx), rerun=rerun, model=model, api_base=api_base, concurrency=concurrency,
                       console=console if rerun else None)
    for problem in report.problems:
        typer.echo(problem)
    rerun_note = f", {report.rerun} re-evaluated" if rerun else ""
    if not report.merges:
        typer.echo("no accepted merge on main to audit")
    elif report.problems:
        typer.echo(f"{len(report.merges)} accepted merge(s) audited{rerun_note}: {len(report.problems)} problem(s)")
    else:
        typer.echo(f"{len(report.merges)} accepted merge(s) audited{rerun_note}: every one is sound")
    if report.problems:
        raise typer.Exit(1)


@app.command()
def status(ctx: typer.Context) -> None:
    """Rounds done, incumbent score, skills and the skills block's tokens, wiki pages, cost so far."""
    info = api.status(_workspace(ctx))
    console.print(f"benchmark   {info.benchmark} (model {info.model})")
    console.print(f"rounds      {info.rounds} completed")
    console.print(f"incumbent   {_score(info.incumbent)} on val")
    console.print(f"skills      {len(info.skills)}: {', '.join(info.skills) or '(none)'} "
                  f"(skills block: {info.skills_tokens} tokens)")
    console.print(f"wiki pages  {info.wiki_pages}")
    roles = ", ".join(f"{role} ${cost:.4f}" for role, cost in sorted(info.cost_by_role.items()))
    console.print(f"cost        ${info.cost_usd:.4f} ({info.tokens} tokens{'; ' + roles if roles else ''})")


@app.command()
def log(ctx: typer.Context) -> None:
    """One row per round: train score, candidate, val score, incumbent, decision, cost (from git trailers).

    A manual rollback gets a row of its own."""
    table = Table("round", "train", "candidate", "val", "incumbent", "decision", "cost $", "tokens",
                  box=box.SIMPLE_HEAD)
    for column in table.columns:
        column.no_wrap = column.header != "candidate"
    table.columns[2].overflow = "fold"  # a long skill name wraps, never cut to `prefer-sco…`
    for row in api.round_log(_workspace(ctx)):
        candidate = f"{row.action} {row.skill}".strip() or "—"
        table.add_row(f"{row.round:03d}", _score(row.train), candidate, _score(row.val), _score(row.incumbent),
                      row.decision or "—", f"{row.cost_usd:.4f}", str(row.tokens))
    console.print(table)


@skills_app.callback()
def skills(ctx: typer.Context, ref: str = typer.Option("main", "--ref", help="Git ref to read skills at.")) -> None:
    """List the active skills, or show one (`wikiskill skills show NAME`).

    Each skill with the train prompts it reached and the tasks its changes helped and hurt."""
    if ctx.invoked_subcommand is not None:
        return
    ws = _workspace(ctx)
    usage = api.skill_usage(ws, ref)
    table = Table("name", "description", "round", "prompts", "helped", "hurt")
    for skill in api.load_skills(ws, ref):
        counts = usage.get(skill.name)
        table.add_row(skill.name, skill.description, skill.metadata.get("wikiskill-round", ""),
                      *(str(getattr(counts, key, 0)) for key in ("prompts", "helped", "hurt")))
    console.print(table)


@skills_app.command("show")
def skills_show(ctx: typer.Context, name: str = typer.Argument(..., help="The skill to print."),
                ref: str = typer.Option("main", "--ref", help="Git ref to read the skill at.")) -> None:
    """Print one skill's SKILL.md and PURPOSE.md."""
    sys.stdout.write(api.show_skill(_workspace(ctx), name, ref))


@app.command()
def prompt(
    ctx: typer.Context,
    task: str = typer.Option("", "--task", help="Task text (used by --mode retrieve)."),
    mode: Optional[str] = typer.Option(None, "--mode", help="full, index or retrieve (default: wikiskill.yaml)."),
    ref: str = typer.Option("main", "--ref", help="Git ref to read skills at."),
) -> None:
    """Print the skills block to paste into any agent's system prompt."""
    sys.stdout.write(api.prompt(_workspace(ctx), task=task, mode=mode, ref=ref))


@app.command("rollback")
def rollback_command(
    ctx: typer.Context,
    name: Optional[str] = typer.Argument(None, help="Skill whose accepted change(s) to revert."),
    round_number: Optional[int] = typer.Option(None, "--round", help="Revert the change accepted in this round."),
) -> None:
    """Revert accepted skill change(s) in one commit, or refuse having written nothing.

    NAME reverts all of the skill's accepted changes; --round N refuses while a later change
    touched the same files. The wiki stays."""
    result = api.rollback(_workspace(ctx), skill=name, round_number=round_number)
    undone = ", ".join(f"round {c.meta.round} ({c.meta.action or 'change'} {c.meta.skill})" for c in result.reverted)
    console.print(f"Rolled back {undone} in one commit ({result.commit[:10]}). "
                  "The incumbent is re-validated on the next `evolve`.", markup=False, highlight=False, soft_wrap=True)


def _plain(text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)


@app.command("show")
def show_command(ctx: typer.Context, round_number: int = typer.Argument(..., help="The round to explain.")) -> None:
    """Explain a round: traces sampled, wiki pages changed, the proposer's reads and proposal, the
    per-task validation and the decision.

    A proposal that was invalid is shown with the reason."""
    story = api.show_round(_workspace(ctx), round_number)
    _plain(f"round {story.number}: train score {_score(story.train_score)}")
    _plain(f"maintain: {len(story.sampled)} trace(s) sampled: {', '.join(story.sampled) or '(none)'}")
    if story.maintain_failed:
        _plain(f"  failed: {story.maintain_failed}")
    _plain(f"  wiki files changed: {', '.join(story.pages_changed) or '(none)'}")
    _plain(f"propose: {story.proposer_turns} turn(s), {story.invalid_outputs} invalid output(s); "
        f"read: {', '.join(story.reads) or '(nothing)'}")
    _plain(f"  proposal: {story.action or '(none)'} {story.skill or ''}".rstrip())
    if story.rationale:
        _plain(f"  rationale: {story.rationale}")
    if story.proposer_error:
        _plain(f"  proposer: {story.proposer_error}")
    if story.validation:
        table = Table("task", "score", "prediction", "expected", title=f"validation: {len(story.validation)} tasks")
        for row in story.validation:
            table.add_row(str(row.get("id")), f"{float(row.get('score') or 0):.3f}", _short(row.get("prediction")),
                          _short(row.get("expected")))
        console.print(table)
    else:
        _plain("validation: (none: the proposal did not reach it)")
    scores = f" ({_score(story.score)} vs incumbent {_score(story.incumbent)})" if story.score is not None else ""
    _plain(f"decision: {story.decision or '(not yet)'}{scores}" + (f": {story.reason}" if story.reason else ""))


@app.command("doctor")
def doctor_command(ctx: typer.Context, model: Optional[str] = ModelOption,
                   api_base: Optional[str] = ApiBaseOption) -> None:
    """Probe each role's model once: reachable, latency, JSON output, tool protocol, context window, price.

    The tool protocol is the one the model speaks (`native`, `text` or `none`); price: whether
    litellm knows it. Exit 1 when a role cannot work."""
    checks = api.doctor(_workspace(ctx), model=model, api_base=api_base)
    table = Table("role", "model", "reachable", "latency", "JSON ok", "tools", "context", "price known")
    mark = {True: "yes", False: "no", None: "—"}
    for check in checks:
        table.add_row(check.role, check.model, mark[check.reachable],
                      f"{check.latency_s:.2f}s" if check.latency_s is not None else "—", mark[check.json_ok],
                      f"{check.protocol} ({check.configured_protocol})",
                      str(check.context_window or "—"), mark[check.price_known])
    console.print(table)
    for check in checks:
        for line in filter(None, [check.problem, *check.notes]):
            console.print(f"{check.role}: {line}", markup=False, highlight=False, soft_wrap=True)
    if any(check.failed for check in checks):
        raise typer.Exit(1)


@app.command("benchmarks")
def benchmarks_command() -> None:
    """List the benchmark suites this install can run (built-in and plugins) and what each needs.

    Each with its kind, default split sizes, whether the offline model plays it, and whether what
    it needs is installed."""
    for row in api.benchmarks():
        spec = row.spec
        if spec is None:
            console.print(f"[bold]{row.name}[/bold]  [red]cannot be loaded[/red]: {row.error}", soft_wrap=True)
            continue
        counts = spec.default_splits
        splits = f"train/val/test {counts.train}/{counts.val}/{counts.test}" if counts else "splits from its files"
        offline = "the offline model plays it" if spec.offline_playable else "needs an LLM"
        ready = "[green]ready[/green]" if row.ready else f"[red]missing {', '.join(row.missing)}[/red]"
        console.print(f"[bold]{row.usage}[/bold]  {spec.kind.value}, {splits}, {offline}  {ready}", soft_wrap=True)
        for line in [spec.summary, *([f"needs: {spec.needs}"] if spec.needs else [])]:
            console.print(Padding(Text(line), (0, 0, 0, 4)))


@app.command("export")
def export_command(
    ctx: typer.Context,
    dest: Path = typer.Argument(..., help="agents: the folder to write the skill folders into; claude, codex: "
                                          "the project (or home) folder whose host skills folder to write."),
    ref: str = typer.Option("main", "--ref", help="Export the skills at this git ref."),
    target: str = typer.Option("agents", "--target", help="agents (DIR/<name>/), claude (DIR/.claude/skills/) "
                                                          "or codex (DIR/.agents/skills/)."),
) -> None:
    """Write the accepted skills as Agent Skills folders (SKILL.md and every file they ship).

    Into DEST (`agents`), or into the folder Claude Code (`DEST/.claude/skills`) or Codex
    (`DEST/.agents/skills`) reads under the project or home folder DEST. Links that would leave
    the skills folder (PURPOSE.md's links into the wiki) are dropped, their text kept."""
    result = api.export(_workspace(ctx), dest, ref, target)
    for name, reason in result.skipped.items():
        errors.print(f"skipped {name}: {reason}", style="yellow", markup=False, highlight=False, soft_wrap=True)
    console.print(f"Exported {len(result.skills)} skill(s) from {ref} ({result.commit[:10]}) to {result.dest}: "
                  f"{len(result.written)} file(s) written, {len(result.removed)} removed.",
                  markup=False, highlight=False, soft_wrap=True)


@app.command("mcp")
def mcp_command(
    ctx: typer.Context,
    ref: str = typer.Option("main", "--ref", help="Serve the skills at this git ref, followed live."),
    transport: str = typer.Option("stdio", "--transport", help="stdio (a host starts this command) or http "
                                                               "(streamable HTTP at http://HOST:PORT/mcp)."),
    host: str = typer.Option("127.0.0.1", "--host", help="http: the address to listen on."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="http: the port to listen on."),
) -> None:
    """Serve the skills to MCP hosts: list_skills, load_skill, search, skills_prompt, skill://NAME.

    Tools `list_skills`, `load_skill`, `search`, `skills_prompt` and a `skill://NAME` resource per
    skill, read live at the tip of --ref on every request."""
    api.serve_mcp(_workspace(ctx), ref, transport, host, port)


@app.command("lint")
def lint_command(ctx: typer.Context) -> None:
    """Check SKILL.md files, Markdown links and the wiki index in the working tree; exit 1 on problems.

    Every SKILL.md against the Agent Skills rules, every wiki link, the index against the pages.

    Skills that overlap are reported as warnings, which do not fail the check."""
    problems = api.lint(_workspace(ctx))
    for problem in problems:
        typer.echo(str(problem))
    if any(not problem.warning for problem in problems):
        raise typer.Exit(1)
    if not problems:
        typer.echo("no problems")


@app.command("search")
def search_command(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="Words to look for."),
    corpus: str = typer.Option("wiki", "--in", help="wiki (pattern pages), skills, or traces (latest train "
                                                    "traces and ingested sessions)."),
    limit: int = typer.Option(10, "--limit", min=1, help="Most hits to show."),
    ref: str = typer.Option("main", "--ref", help="Search at this git ref."),
) -> None:
    """Ranked hits (BM25) with path and the best-matching line."""
    hits = api.search(_workspace(ctx), query, corpus, ref, limit)
    for hit in hits:
        typer.echo(f"{hit.score:6.2f}  {hit.path}  {hit.snippet}")
    if not hits:
        typer.echo("no matches")


@app.command("watch")
def watch_command(
    ctx: typer.Context,
    commit: bool = typer.Option(False, "--commit", help="Commit edits that add no lint problem as `human` steps."),
) -> None:
    """Lint skills/ and wiki/ on every save until Ctrl-C; with --commit, commit the valid edits."""
    import time

    from rich.markup import escape

    from .integrations.watch import WatchReport

    ws = _workspace(ctx)

    def show(report: WatchReport) -> None:
        if report.changed:
            console.print(f"[dim]{time.strftime('%H:%M:%S')}[/dim] changed: {', '.join(report.changed)}",
                          highlight=False, soft_wrap=True)
        for problem in report.problems:
            console.print(f"  [red]✗[/red] {escape(str(problem))}", highlight=False, soft_wrap=True)
        if not report.problems:
            console.print("  [green]✓[/green] no problems", highlight=False)
        if report.committed:
            console.print(f"  committed {report.committed[:10]} as a human step: "
                          f"{escape(', '.join(report.committed_paths))}", highlight=False, soft_wrap=True)
        if report.held_back:
            console.print(f"  [yellow]not committed (they add problems):[/yellow] {escape(', '.join(report.held_back))}",
                          highlight=False, soft_wrap=True)
        if report.note:
            console.print(f"  [yellow]not committed:[/yellow] {escape(report.note)}", highlight=False, soft_wrap=True)

    what = "linting and committing valid edits" if commit else "linting"
    console.print(f"Watching skills/ and wiki/ in {escape(str(ws.root))} ({what}); Ctrl-C stops.",
                  highlight=False, soft_wrap=True)
    try:
        api.watch(ws, show, commit=commit)
    except KeyboardInterrupt:
        console.print("stopped")


@app.command("ingest")
def ingest_command(
    ctx: typer.Context,
    files: list[Path] = typer.Argument(..., help="Session transcript files."),
    session_format: str = typer.Option(..., "--format", help="claude-code (a session .jsonl from "
                                       "~/.claude/projects/<project>/) or openai-messages (a JSON list of chat messages)."),
    outcome: str = typer.Option("unknown", "--outcome", help="success, failure or unknown: how the sessions "
                                                             "ended (unknown ones are sampled with the failures)."),
) -> None:
    """Import real agent sessions into raw/ so the next round's maintainer and proposer learn from them.

    They go into `raw/rNNN/ingested/` for the next round, secrets scrubbed, in one `ingest` commit.
    A malformed file is refused with its name and line and nothing is written; a session ingested
    before is skipped."""
    result = api.ingest(_workspace(ctx), files, session_format, outcome)
    for path in result.skipped:
        console.print(f"skipped {path}: already ingested", markup=False, highlight=False, soft_wrap=True)
    if result.commit is None:
        console.print("Nothing new to ingest.")
        return
    console.print(f"Ingested {len(result.added)} session(s) as raw/r{result.round:03d}/ingested/ "
                  f"({', '.join(t.task_id for t in result.added)}) in {result.commit[:10]}; round {result.round} "
                  "learns from them.", markup=False, highlight=False, soft_wrap=True)


@app.command("report")
def report_command(
    ctx: typer.Context,
    out: Path = typer.Option(Path("report.html"), "--out", help="Where to write the HTML page."),
) -> None:
    """One static HTML page, readable offline: val score, cost, skills timeline, wiki growth per round.

    The val score per round (candidate and incumbent, decisions marked), cost and tokens per
    round, the skills timeline, the wiki's growth and the latest validation task by task."""
    path = api.report(_workspace(ctx), out)
    console.print(f"Wrote {path}", markup=False, highlight=False, soft_wrap=True)
