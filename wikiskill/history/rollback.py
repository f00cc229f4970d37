"""Undo accepted skill changes: one `rollback` commit on main, or a refusal that writes nothing.

Everything is checked before anything is written. `rollback NAME` reverts every active accepted
change of NAME, newest first, in one commit; `--round N` reverts that round's change and refuses
while a later change (another round's, a hand edit) touched the same files. The wiki stays.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import WorkspaceError
from ..knowledge.purpose import HISTORY, add_history
from ..loop.impact import IMPACT, ImpactEntry, append_entry
from ..store.rounds import completed_rounds
from ..store.trailers import Decision, Step, Trailers
from ..store.workspace import MAIN, Commit, Workspace, format_message


@dataclass(frozen=True)
class RollbackResult:
    commit: str
    reverted: list[Commit]
    """The accepted merges undone, newest first."""


def accepted_merges(ws: Workspace) -> list[Commit]:
    """Accepted gate merges on main that no later rollback has reverted, newest first."""
    log = ws.log(MAIN)
    reverted = {sha for c in log if c.meta.step == Step.ROLLBACK for sha in c.meta.reverted}
    return [c for c in log if c.meta.step == Step.GATE and c.meta.decision == Decision.ACCEPTED
            and len(c.parents) == 2 and c.sha not in reverted]


def rollback(ws: Workspace, skill: str | None = None, round_number: int | None = None) -> RollbackResult:
    """Revert the accepted change(s) of a skill or of a round in one commit."""
    if (skill is None) == (round_number is None):
        raise WorkspaceError("name a skill or pass --round N (one of the two)")
    with ws.lock("wikiskill rollback"):
        ws.recover()
        active = accepted_merges(ws)
        targets = [c for c in active if (skill is not None and c.meta.skill == skill)
                   or (round_number is not None and c.meta.round == round_number)]
        if not targets:
            what = f"skill {skill!r}" if skill else f"round {round_number}"
            raise WorkspaceError(f"nothing to roll back: no accepted change of {what} is active on main")
        changes = _revert_all(ws, targets, active)
        return RollbackResult(_commit(ws, targets, changes), targets)


def _revert_all(ws: Workspace, targets: list[Commit], active: list[Commit]) -> dict[str, str | None]:
    """The skills/ files as they were before every target, applied newest first in memory; a file
    changed after a target by anything not being reverted too is a conflict, and nothing is written."""
    current: dict[str, str | None] = {}
    for merge in targets:
        for path in ws.changed_paths(merge.parents[0], merge.sha, "skills"):
            now = current[path] if path in current else ws.read_file(MAIN, path)
            if _without_history(now) != _without_history(ws.read_file(merge.sha, path)):
                raise WorkspaceError(f"cannot roll back round {merge.meta.round} ({merge.meta.skill}): {path} "
                                     f"changed after it{_later_changes(ws, merge, path, active)}; roll that back first "
                                     "(or roll back the skill by name, which reverts all its changes)")
            current[path] = ws.read_file(merge.parents[0], path)
    for merge in reversed(targets):  # oldest first, so the history reads in order
        purpose = f"skills/{merge.meta.skill}/PURPOSE.md"
        if current.get(purpose) is not None:
            current[purpose] = add_history(current[purpose], merge.meta.round or 0,
                                           f"rolled back (revert of {merge.sha[:10]})")
    return current


def _without_history(text: str | None) -> str | None:
    """A file as the conflict check sees it: PURPOSE.md's Evolution History is the harness's own
    bookkeeping (a rollback appends to it), not a change a person or a round made."""
    if text is None or HISTORY not in text:
        return text
    return text[:text.index(HISTORY)]


def _later_changes(ws: Workspace, merge: Commit, path: str, active: list[Commit]) -> str:
    later = [c for c in active if c.meta.round is not None and merge.meta.round is not None
             and c.meta.round > merge.meta.round and path in ws.changed_paths(c.parents[0], c.sha, "skills")]
    if not later:
        return " (by a commit that is not an accepted change, e.g. a hand edit)"
    return " in " + ", ".join(f"round {c.meta.round} ({c.meta.action} {c.meta.skill})" for c in later)


def _commit(ws: Workspace, targets: list[Commit], changes: dict[str, str | None]) -> str:
    impact = ws.read_file(MAIN, IMPACT)
    for merge in reversed(targets):
        merged_round = merge.meta.round or 0
        impact = append_entry(impact, ImpactEntry(
            merged_round, Step.ROLLBACK, merge.meta.skill or "", Decision.ROLLED_BACK,
            f"revert of {merge.sha[:10]}; the incumbent is re-validated on the next run",
            f"manual rollback of the change accepted in round {merged_round}", f"main (revert of {merge.sha[:10]})"))
    changes[IMPACT] = impact
    names = sorted({merge.meta.skill or "" for merge in targets})
    rounds = ", ".join(str(merge.meta.round) for merge in reversed(targets))
    message = format_message(
        f"rollback: revert {', '.join(names)} (accepted in round{'s' if len(targets) > 1 else ''} {rounds})",
        Trailers(round=completed_rounds(ws), step=Step.ROLLBACK, decision=Decision.ROLLED_BACK,
                 skill=",".join(names), reverts=",".join(merge.sha for merge in targets), cost_usd=0.0),
        body="\n".join(f"This reverts the skills/ changes of commit {merge.sha}." for merge in targets),
    )
    return ws.commit(changes, message)
