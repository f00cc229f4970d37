"""The commands of a person in the loop: `review`, `accept`, `reject` (the queue of
`gate.review: human`) and `lock`, `unlock` (`skills.locked`)."""

from __future__ import annotations

import json
import sys

import typer

from .. import api
from ..loop.impact import effect_report
from ..store.trailers import Decision
from .common import plain, run_options, score_text, workspace_of


def review_command(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the queue as a JSON list, for scripts."),
) -> None:
    """List the candidates waiting for review: diff, tasks helped and hurt, interval, cost change, cites.

    Under `gate.review: human` a candidate the gate policy accepts waits on `pending/rNNN-<name>`;
    decide with `wikiskill accept NAME` or `wikiskill reject NAME --why "..."`."""
    queue = api.review(workspace_of(ctx))
    if as_json:
        sys.stdout.write(json.dumps([item.to_json() for item in queue], indent=2, ensure_ascii=False) + "\n")
        return
    if not queue:
        plain("no candidate waits for review")
        return
    for item in queue:
        cost = item.cost
        plain(f"{item.id}: {item.action} {item.skill} ({item.branch})")
        plain(f"  val {score_text(item.candidate)} vs incumbent {score_text(item.incumbent)}: {item.reason}")
        plain(f"  interval of the gain: {item.interval or '—'} ({item.policy})")
        for line in effect_report(item.effect):
            plain(f"  {line}")
        plain(
            f"  agent tokens per task: {cost.get('incumbent_tokens', 0):.0f} -> {cost.get('candidate_tokens', 0):.0f}"
            f"; USD per task: {cost.get('incumbent_usd', 0):.6f} -> {cost.get('candidate_usd', 0):.6f}"
        )
        plain(f"  cites: {', '.join(item.pages + item.traces) or '—'}")
        if item.rationale:
            plain(f"  rationale: {item.rationale}")
        if item.main_moved:
            plain("  main's skills changed since it was validated: `accept` validates it again first")
        plain(item.diff.rstrip() or "  (no change to skills/)")
        plain("")


@run_options("model", "api_base", "concurrency")
def accept_command(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The candidate: rNNN-<name>, or its skill's name."),
    *,
    options: api.RunOptions,
) -> None:
    """Merge a pending candidate, in one commit decided by you; validated again first if main moved.

    When main's skills or the evaluation setup changed since the candidate was validated, it is
    re-applied to main and validated again, and the gate's verdict on that decides: a candidate the
    gate now rejects is tagged rejected, not merged (exit 1)."""
    ws = workspace_of(ctx)
    result = api.accept(ws, name, options)
    plain(f"{result.candidate}: {result.decision.value} ({result.commit[:10]}): {result.reason}")
    if result.decision is not Decision.ACCEPTED:
        raise typer.Exit(1)


def reject_command(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The candidate: rNNN-<name>, or its skill's name."),
    why: str = typer.Option(..., "--why", help="Your reason; it goes into skill-impact.md, which the proposer reads."),
) -> None:
    """Turn down a pending candidate for your reason, in one commit: tagged rejected/rNNN-<name>."""
    result = api.reject(workspace_of(ctx), name, why)
    plain(f"{result.candidate}: rejected ({result.commit[:10]}): {result.reason}")


def lock_command(ctx: typer.Context, name: str = typer.Argument(..., help="The skill to lock.")) -> None:
    """Lock a skill: the proposer may not patch or retire it, and `rollback` needs --force.

    Adds it to `skills.locked` in wikiskill.yaml in one commit, together with the skill's own
    uncommitted files (a skill you wrote by hand is committed and locked at once)."""
    sha = api.lock(workspace_of(ctx), name)
    plain(f"locked {name} ({sha[:10]})" if sha else f"{name} is already locked: nothing to do")


def unlock_command(ctx: typer.Context, name: str = typer.Argument(..., help="The skill to unlock.")) -> None:
    """Unlock a skill: remove it from `skills.locked` in one commit.

    Unlocking a skill that is not locked changes nothing and exits 0, as locking a locked one does."""
    sha = api.unlock(workspace_of(ctx), name)
    plain(f"unlocked {name} ({sha[:10]})" if sha else f"{name} is already unlocked: nothing to do")
