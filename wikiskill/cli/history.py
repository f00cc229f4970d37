"""The commands that look back: `status`, `log`, `show` (one round's story), `rollback`, `report`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich import box
from rich.table import Table

from .. import api
from ..history.live import DEFAULT_PORT
from ..history.transcript import transcript_lines
from .common import command_name, console, plain, print_table, score_text, shorten, workspace_of


def status(ctx: typer.Context) -> None:
    """Rounds done, incumbent score, skills and the skills block's tokens, wiki pages, cost so far."""
    info = api.status(workspace_of(ctx))
    console.print(f"benchmark   {info.benchmark} (model {info.model})")
    console.print(f"rounds      {info.rounds} completed")
    console.print(f"incumbent   {score_text(info.incumbent)} on val")
    console.print(
        f"skills      {len(info.skills)}: {', '.join(info.skills) or '(none)'} "
        f"(skills block: {info.skills_tokens} tokens)"
    )
    console.print(f"wiki pages  {info.wiki_pages}")
    if info.pending:
        console.print(f"review      {len(info.pending)} pending: {', '.join(info.pending)} (`{command_name()} review`)")
    console.print(f"test        looked at {info.test_looks} time(s) (sealed: only eval --split test, uplift)")
    if info.alpha_left is not None:
        console.print(f"alpha       {info.alpha_spent:.4f} of the run's budget spent, {info.alpha_left:.4f} left")
    if info.unsound:
        console.print(f"unsound     {len(info.unsound)} task(s) left out of every split:")
        for task_id, reason in info.unsound.items():
            console.print(f"  {task_id}: {reason}", markup=False, highlight=False, soft_wrap=True)
    console.print(f"cost        ${info.cost_usd:.4f} ({info.tokens} tokens)")
    for role, spend in info.by_role.items():
        cached = f" ({spend.cached_tokens} cached)" if spend.cached_tokens else ""
        console.print(f"  {role:<11} ${spend.cost_usd:.4f}, {spend.tokens} tokens{cached}")


def log(ctx: typer.Context) -> None:
    """One row per round: train score, candidate, val score, incumbent, decision, cost (from git trailers).

    A round a person decided later shows its decisions in order (`pending → accepted`); a manual
    rollback gets a row of its own, with no round number, after the round it followed."""
    rows = [
        [
            "—" if row.is_rollback else f"{row.round:03d}",
            score_text(row.train),
            f"{row.action} {row.skill}".strip() or "—",
            score_text(row.val),
            score_text(row.incumbent),
            row.decision_text or "—",
            f"{row.cost_usd:.4f}",
            str(row.tokens),
        ]
        for row in api.round_log(workspace_of(ctx))
    ]
    print_table(
        ["round", "train", "candidate", "val", "incumbent", "decision", "cost $", "tokens"],
        rows,
        names=(2,),
        box=box.SIMPLE_HEAD,
    )


def show_command(
    ctx: typer.Context,
    round_number: int = typer.Argument(..., help="The round to explain."),
    task: str | None = typer.Option(
        None, "--task", help="Print this task's trajectory instead, as the agent lived it."
    ),
) -> None:
    """Explain a round: traces sampled, wiki pages changed, the proposer's reads and proposal, the
    per-task validation and the decision.

    A proposal that was invalid is shown with the reason. With --task ID, one task's trajectory:
    its prompt with the skills it carried, each message, tool call and result, the answer, the
    score and the scorer's feedback (a val task: its answer and score)."""
    if task is not None:
        for line in transcript_lines(api.show_task(workspace_of(ctx), round_number, task)):
            plain(line)
        return
    story = api.show_round(workspace_of(ctx), round_number)
    plain(f"round {story.number}: train score {score_text(story.train_score)}")
    for task_id, reason in story.unsound.items():
        plain(f"left out as unsound: {task_id}: {reason}")
    plain(f"maintain: {len(story.sampled)} trace(s) sampled: {', '.join(story.sampled) or '(none)'}")
    if story.maintain_failed:
        plain(f"  failed: {story.maintain_failed}")
    plain(f"  wiki files changed: {', '.join(story.pages_changed) or '(none)'}")
    plain(
        f"propose: {story.proposer_turns} turn(s), {story.invalid_outputs} invalid output(s); "
        f"read: {', '.join(story.reads) or '(nothing)'}"
    )
    plain(f"  proposal: {story.action or '(none)'} {story.skill or ''}".rstrip())
    if story.rationale:
        plain(f"  rationale: {story.rationale}")
    if story.proposer_error:
        plain(f"  proposer: {story.proposer_error}")
    if story.validation:
        title = f"validation: {len(story.validation)} tasks" + (f" ({story.looks})" if story.looks else "")
        table = Table("task", "score", "prediction", "expected", title=title)
        for row in story.validation:
            infra = row.get("failure") == "infra"
            table.add_row(
                str(row.get("id")),
                "infra" if infra else f"{float(row.get('score') or 0):.3f}",
                shorten(row.get("error") if infra else row.get("prediction")),
                shorten(row.get("expected")),
            )
        console.print(table)
        left_out = story.infra
        if left_out:
            plain(f"  left out as infra: {len(left_out)} ({'; '.join(f'{t}: {r}' for t, r in left_out.items())})")
    else:
        plain("validation: (none: the proposal did not reach it)")
    for spent in story.retries:
        plain(f"infra retries, {spent.text()}")
    scores = ""
    if story.score is not None:
        scores = f" ({score_text(story.score)} vs incumbent {score_text(story.incumbent)})"
    plain(f"decision: {story.decision or '(not yet)'}{scores}" + (f": {story.reason}" if story.reason else ""))


def rollback_command(
    ctx: typer.Context,
    name: str | None = typer.Argument(None, help="Skill whose changes to revert."),
    round_number: int | None = typer.Option(None, "--round", help="Revert the change accepted in this round."),
    keep_human_edits: bool = typer.Option(
        False,
        "--keep-human-edits",
        help="With NAME: revert only the accepted changes and keep later edits by hand (refused where an "
        "edit builds on a change being reverted).",
    ),
    force: bool = typer.Option(False, "--force", help="Roll back a locked skill (skills.locked) too."),
) -> None:
    """Revert skill changes in one commit, or refuse having written nothing.

    NAME puts the skill back as it was before its oldest active accepted change: every change
    since, accepted or by hand (a commit of your own, `evolve --commit-human-edits`), is reverted,
    and the commit body names the hand edits. --round N reverts that round's change, keeping later
    edits where they can be separated from it. A locked skill is rolled back only with --force. A
    refusal names the command that works. The wiki stays."""
    result = api.rollback(
        workspace_of(ctx), skill=name, round_number=round_number, keep_human_edits=keep_human_edits, force=force
    )
    undone = ", ".join(f"round {c.meta.round} ({c.meta.action or 'change'} {c.meta.skill})" for c in result.reverted)
    if result.human_edits:
        undone += (
            f" and {len(result.human_edits)} hand edit(s) of it ("
            + ", ".join(commit.sha[:10] for commit in result.human_edits)
            + ")"
        )
    console.print(
        f"Rolled back {undone} in one commit ({result.commit[:10]}). "
        "The incumbent is re-validated on the next `evolve`.",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def report_command(
    ctx: typer.Context,
    out: Path = typer.Option(
        Path("report.html"),
        "--out",
        help="Where to write the HTML page; its per-task pages go in NAME-tasks/ beside it.",
    ),
    serve: bool = typer.Option(
        False, "--serve", help="Serve the page on 127.0.0.1 instead, refreshed as a running evolve's steps land."
    ),
    port: int = typer.Option(DEFAULT_PORT, "--port", help="The port --serve listens on (0: any free one)."),
) -> None:
    """One static HTML page, readable offline: val score, cost, skills timeline, wiki growth per round.

    The val score per round (candidate and incumbent, decisions marked), cost and tokens per
    round, the skills timeline, the wiki's growth and the latest validation task by task. With
    --serve, the same page on loopback while a run goes: new rounds, the step running now with
    its progress, and the run's spend so far appear without a reload; it writes nothing and
    runs beside `evolve`. Ctrl-C stops it."""
    ws = workspace_of(ctx)
    if not serve:
        from ..history.htmlreport import tasks_folder

        path = api.report(ws, out)
        console.print(f"Wrote {path}", markup=False, highlight=False, soft_wrap=True)
        folder = tasks_folder(path)
        if folder.is_dir():
            pages = sum(1 for _ in folder.glob("*.html"))
            console.print(
                f"and {pages} task page(s) in {folder}/, which its rows link to: move or share them with it",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        return
    server = api.live_report(ws, port)
    console.print(f"Serving the live report at {server.url} (Ctrl-C to stop)", markup=False, highlight=False)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        console.print("Stopped serving the report.", highlight=False)
    finally:
        server.server_close()
