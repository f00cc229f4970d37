"""Undo skill changes: one `rollback` commit on main, or a refusal that writes nothing.

Everything is checked before anything is written, and every refusal names a command that works.
`rollback NAME` puts the skill back as it was before its oldest active accepted change: every
change since, accepted or a person's (a commit by hand, `evolve --commit-human-edits`), is undone
in one commit whose body names the person's edits. `--keep-human-edits` reverts only the accepted
changes, newest first, keeping a person's later edits merged line by line, and refuses where an
edit builds on a change being reverted. `--round N` reverts that round's change the same way. The
wiki stays.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import WorkspaceError
from ..knowledge.purpose import HISTORY, add_history
from ..loop.impact import IMPACT, ImpactEntry, append_entry
from ..store.rounds import completed_rounds
from ..store.settings import load_config
from ..store.trailers import Decision, Step, Trailers
from ..store.workspace import MAIN, Commit, Workspace, format_message

Changes = dict[str, str | None]


@dataclass(frozen=True)
class RollbackResult:
    commit: str
    reverted: list[Commit]
    """The accepted merges undone, newest first."""
    human_edits: list[Commit] = field(default_factory=list)
    """Commits that were not accepted changes (edits by hand) whose changes to the skill were
    undone too, newest first."""


def accepted_merges(ws: Workspace) -> list[Commit]:
    """Accepted gate merges on main that no later rollback has reverted, newest first."""
    log = ws.log(MAIN)
    reverted = {sha for c in log if c.meta.step == Step.ROLLBACK for sha in c.meta.reverted}
    return [
        c
        for c in log
        if c.meta.step == Step.GATE
        and c.meta.decision == Decision.ACCEPTED
        and len(c.parents) == 2
        and c.sha not in reverted
    ]


def rollback(
    ws: Workspace,
    skill: str | None = None,
    round_number: int | None = None,
    keep_human_edits: bool = False,
    force: bool = False,
) -> RollbackResult:
    """Revert every change of `skill` since its oldest active accepted change, the edits by hand
    included (only the accepted changes with `keep_human_edits`), or the change accepted in
    `round_number`, in one commit; a locked skill (`skills.locked`) only with `force`."""
    if (skill is None) == (round_number is None):
        raise WorkspaceError(
            "name a skill (`wikiskill rollback NAME`) or a round (`wikiskill rollback --round N`), one of the two"
        )
    with ws.writing("wikiskill rollback"):
        active = accepted_merges(ws)
        targets = [
            c
            for c in active
            if (skill is not None and c.meta.skill == skill)
            or (round_number is not None and c.meta.round == round_number)
        ]
        if not targets:
            raise WorkspaceError(_nothing_to_roll_back(ws, skill, round_number))
        locked = sorted({c.meta.skill or "" for c in targets} & set(load_config(ws.root).skills.locked))
        if locked and not force:
            raise WorkspaceError(
                f"skill {locked[0]!r} is locked (skills.locked): roll it back with --force, "
                f"or `wikiskill unlock {locked[0]}` first"
            )
        edits: list[Commit] = []
        if skill is not None and not keep_human_edits:
            changes, edits = _restore_before(ws, skill, targets, active)
        else:
            changes = _revert_accepted(ws, targets, active)
        for merge in reversed(targets):  # oldest first, so the history reads in order
            purpose = f"skills/{merge.meta.skill}/PURPOSE.md"
            text = changes.get(purpose)
            if text is not None:
                changes[purpose] = add_history(text, merge.meta.round or 0, f"rolled back (revert of {merge.sha[:10]})")
        return RollbackResult(_commit(ws, targets, changes, edits), targets, edits)


def _nothing_to_roll_back(ws: Workspace, skill: str | None, round_number: int | None) -> str:
    if skill is None:
        return (
            f"nothing to roll back: no accepted change of round {round_number} is active on main "
            "(`wikiskill log` lists each round's decision)"
        )
    edits = [commit for commit, _ in ws.touching_commits(MAIN, f"skills/{skill}/") if _is_edit(commit, [])]
    if edits:
        return (
            f"nothing to roll back: no accepted change of skill {skill!r} is active on main; "
            f"undo an edit by hand with `git revert {edits[0].sha[:10]}` ({edits[0].subject[:60]})"
        )
    if not ws.list_paths(MAIN, f"skills/{skill}"):
        return f"nothing to roll back: there is no skill {skill!r} on main (`wikiskill skills` lists them)"
    return (
        f"nothing to roll back: no accepted change of skill {skill!r} is active on main "
        "(`wikiskill log` shows what each round did)"
    )


def _is_edit(commit: Commit, active: list[Commit]) -> bool:
    """A change that is neither an accepted merge nor a rollback: a person's, by hand or through
    `evolve --commit-human-edits`. (An accepted merge a rollback already reverted counts as neither.)"""
    return commit not in active and commit.meta.step not in (Step.GATE, Step.ROLLBACK)


def _restore_before(
    ws: Workspace, skill: str, targets: list[Commit], active: list[Commit]
) -> tuple[Changes, list[Commit]]:
    """The skill's files as they were before its oldest active accepted change, and the edits by
    hand since that this undoes. An accepted change of another skill to these files since is a
    conflict: it is not being rolled back, and nothing is written."""
    oldest = targets[-1]
    base = oldest.parents[0]
    paths = set(ws.changed_paths(base, MAIN, f"skills/{skill}/"))
    for merge in targets:
        paths.update(ws.changed_paths(merge.parents[0], merge.sha, "skills"))
    edits = []
    for commit, touched in _since(ws, oldest):
        hit = sorted(paths.intersection(touched))
        if not hit or commit in targets:
            continue
        if commit in active:
            raise WorkspaceError(
                f"cannot roll back skill {skill!r}: {hit[0]} was also changed by round {commit.meta.round} "
                f"({commit.meta.action} {commit.meta.skill}), which is not being rolled back; roll that back "
                f"first with `wikiskill rollback --round {commit.meta.round}`"
            )
        if _is_edit(commit, active):
            edits.append(commit)
    return {path: ws.read_file(base, path) for path in sorted(paths)}, edits


def _since(ws: Workspace, merge: Commit) -> list[tuple[Commit, list[str]]]:
    """Commits on main's first-parent line after `merge`, each with the skills/ paths it changed,
    newest first."""
    later: list[tuple[Commit, list[str]]] = []
    for commit, touched in ws.touching_commits(MAIN, "skills"):
        if commit.sha == merge.sha:
            return later
        later.append((commit, touched))
    return later


def _revert_accepted(ws: Workspace, targets: list[Commit], active: list[Commit]) -> Changes:
    """The skills/ files with the targets' changes undone, newest first, in memory: a file changed
    after a target by anything not being reverted keeps that change where a line-level merge can
    separate it; where it cannot, that is a conflict, and nothing is written."""
    current: Changes = {}
    for merge in targets:
        for path in ws.changed_paths(merge.parents[0], merge.sha, "skills"):
            now = current[path] if path in current else ws.read_file(MAIN, path)
            then, before = ws.read_file(merge.sha, path), ws.read_file(merge.parents[0], path)
            if _without_history(now) == _without_history(then):
                current[path] = before
                continue
            merged = None if now is None or then is None or before is None else ws.merge_text(now, then, before)
            if merged is None:
                raise WorkspaceError(_conflict(ws, merge, path, active, targets))
            current[path] = merged
    return current


def _without_history(text: str | None) -> str | None:
    """A file as the conflict check sees it: PURPOSE.md's Evolution History is the harness's own
    bookkeeping (a rollback appends to it), not a change a person or a round made."""
    if text is None or HISTORY not in text:
        return text
    return text[: text.index(HISTORY)]


def _conflict(ws: Workspace, merge: Commit, path: str, active: list[Commit], targets: list[Commit]) -> str:
    """Why `merge` cannot be reverted in `path`, and the command that can."""
    name, number = merge.meta.skill, merge.meta.round
    what = f"cannot roll back round {number} ({name}): {path} changed after it"
    later = [c for c, touched in _since(ws, merge) if path in touched and c in active and c not in targets]
    if later:
        rounds = ", ".join(f"round {c.meta.round} ({c.meta.action} {c.meta.skill})" for c in later)
        return (
            f"{what} in {rounds}; roll that back first (`wikiskill rollback --round {later[-1].meta.round}`) "
            f"or roll back the whole skill (`wikiskill rollback {name}`)"
        )
    edits = [c for c, touched in _since(ws, merge) if path in touched and _is_edit(c, active)]
    if edits:
        named = ", ".join(f"{c.sha[:10]} ({c.subject[:50]})" for c in edits)
        return (
            f"{what} by {len(edits)} edit(s) that are not accepted changes (by hand or by "
            f"`evolve --commit-human-edits`): {named}, which build on it; `wikiskill rollback {name}` "
            f"reverts every change of {name}, these edits included"
        )
    return f"{what}; `wikiskill rollback {name}` reverts every change of {name}"


def _commit(ws: Workspace, targets: list[Commit], changes: Changes, edits: list[Commit]) -> str:
    impact = ws.read_file(MAIN, IMPACT)
    for merge in reversed(targets):
        merged_round = merge.meta.round or 0
        impact = append_entry(
            impact,
            ImpactEntry(
                merged_round,
                Step.ROLLBACK,
                merge.meta.skill or "",
                Decision.ROLLED_BACK,
                f"revert of {merge.sha[:10]}; the incumbent is re-validated on the next run",
                f"manual rollback of the change accepted in round {merged_round}",
                f"main (revert of {merge.sha[:10]})",
            ),
        )
    changes[IMPACT] = impact
    names = sorted({merge.meta.skill or "" for merge in targets})
    rounds = ", ".join(str(merge.meta.round) for merge in reversed(targets))
    also = f" and {len(edits)} hand edit(s)" if edits else ""
    body = [f"This reverts the skills/ changes of commit {merge.sha}." for merge in targets]
    if edits:
        body += [
            "",
            f"It also reverts the changes to skills/{names[0]}/ of these commits, which were not "
            "accepted changes (edits by hand or by `evolve --commit-human-edits`):",
        ]
        body += [f"- {commit.sha[:10]} {commit.subject}" for commit in edits]
    message = format_message(
        f"rollback: revert {', '.join(names)} (accepted in round{'s' if len(targets) > 1 else ''} {rounds}){also}",
        Trailers(
            round=completed_rounds(ws),
            step=Step.ROLLBACK,
            decision=Decision.ROLLED_BACK,
            skill=",".join(names),
            reverts=",".join(merge.sha for merge in targets),
            cost_usd=0.0,
        ),
        body="\n".join(body),
    )
    return ws.commit(changes, message)
