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


def _revert(ws: Workspace, merge: Commit) -> str:
    name = merge.trailer("Skill") or ""
    merged_round = int(merge.trailer("Round") or 0)
    tree = ws.merged_tree(MAIN, merge.parents[0], merge_base=merge.sha)
    changes: dict[str, str | None] = {}
    purpose_path = f"skills/{name}/PURPOSE.md"
    purpose = ws.read_file(tree, purpose_path)
    if purpose is not None:
        changes[purpose_path] = add_history(purpose, merged_round, f"rolled back (revert of {merge.sha[:10]})")
    entry = impact_entry(
        merged_round, "rollback", name, f"manual rollback of the change accepted in round {merged_round}",
        GateDecision("rolled_back", f"revert of {merge.sha[:10]}; the incumbent is re-validated on the next run"),
        None, None, f"main (revert of {merge.sha[:10]})",
    )
    impact = ws.read_file(tree, IMPACT) or ""
    changes[IMPACT] = f"{impact.rstrip()}\n\n{entry}"
    message = format_message(
        f"rollback: revert {name} (accepted in round {merged_round})",
        {"Round": completed_rounds(ws), "Step": "rollback", "Skill": name, "Reverts": merge.sha, "Cost-USD": "0"},
        body=f"This reverts commit {merge.sha}.",
    )
    return ws.commit(changes, message, base=tree)
