"""Undo accepted skill changes with reverts recorded as `rollback` steps. The wiki stays."""

from __future__ import annotations

from .errors import WorkspaceError
from .gate import GateDecision, impact_entry
from .history import completed_rounds
from .proposals import add_history
from .wiki import IMPACT
from .workspace import MAIN, Commit, Workspace, format_message


def accepted_merges(ws: Workspace) -> list[Commit]:
    """Accepted gate merges on main that no later rollback has reverted, newest first."""
    log = ws.log(MAIN)
    reverted = {c.trailer("Reverts") for c in log if c.trailer("Step") == "rollback"}
    return [c for c in log if c.trailer("Step") == "gate" and c.trailer("Decision") == "accepted"
            and len(c.parents) == 2 and c.sha not in reverted]


def rollback(ws: Workspace, skill: str | None = None, round_number: int | None = None) -> list[str]:
    """Revert the accepted merge(s) of a skill or of a round; return the new commit ids."""
    if (skill is None) == (round_number is None):
        raise WorkspaceError("name a skill or pass --round N (one of the two)")
    targets = [c for c in accepted_merges(ws)
               if (skill is not None and c.trailer("Skill") == skill)
               or (round_number is not None and c.trailer("Round") == str(round_number))]
    if not targets:
        what = f"skill {skill!r}" if skill else f"round {round_number}"
        raise WorkspaceError(f"nothing to roll back: no accepted change of {what} is active on main")
    with ws.lock("wikiskill rollback"):
        ws.recover()
        return [_revert(ws, merge) for merge in targets]


def _skills_revert(ws: Workspace, merge: Commit) -> dict[str, str | None]:
    """Put back every skills/ file the merge changed, as it was before the merge.

    Only skills/ is reverted: the wiki (including the gate's own skill-impact entry) stays.
    A file changed again after the merge is a conflict, reported rather than overwritten.
    """
    before = merge.parents[0]
    changes: dict[str, str | None] = {}
    for path in ws.changed_paths(before, merge.sha, "skills"):
        if ws.read_file(MAIN, path) != ws.read_file(merge.sha, path):
            raise WorkspaceError(f"cannot roll back {merge.trailer('Skill')}: {path} changed after round "
                                 f"{merge.trailer('Round')}; roll back the later change first")
        changes[path] = ws.read_file(before, path)
    return changes


def _revert(ws: Workspace, merge: Commit) -> str:
    name = merge.trailer("Skill") or ""
    merged_round = int(merge.trailer("Round") or 0)
    changes = _skills_revert(ws, merge)
    purpose_path = f"skills/{name}/PURPOSE.md"
    if changes.get(purpose_path) is not None:
        changes[purpose_path] = add_history(changes[purpose_path], merged_round,
                                            f"rolled back (revert of {merge.sha[:10]})")
    entry = impact_entry(
        merged_round, "rollback", name, f"manual rollback of the change accepted in round {merged_round}",
        GateDecision("rolled_back", f"revert of {merge.sha[:10]}; the incumbent is re-validated on the next run"),
        None, None, f"main (revert of {merge.sha[:10]})",
    )
    impact = ws.read_file(MAIN, IMPACT) or ""
    changes[IMPACT] = f"{impact.rstrip()}\n\n{entry}"
    message = format_message(
        f"rollback: revert {name} (accepted in round {merged_round})",
        {"Round": completed_rounds(ws), "Step": "rollback", "Skill": name, "Reverts": merge.sha, "Cost-USD": "0"},
        body=f"This reverts the skills/ changes of commit {merge.sha}.",
    )
    return ws.commit(changes, message)
