"""A person's decisions: accept or reject a candidate waiting for review (`gate.review: human`),
lock or unlock a skill (`skills.locked`). Each is one commit on main naming who decided
(`Wikiskill-Decided-By: person`).

A decision survives `kill -9` anywhere the way every step does: what it writes before its
commit (a rejected tag, a re-validation on the pending branch) is checked for and reused on the
next run, its commit on main names the candidate's evidence commit (`Wikiskill-Candidate`), so a
run killed after it only removes the pending branch that is left.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.config import CONFIG_FILE
from ..core.errors import ConfigError, WikiskillError, WorkspaceError
from ..core.text import read_utf8
from ..store.pending import PERSON, Pending, find_pending
from ..store.rounds import RoundState, completed_rounds, read_branch, rejected_tag, round_label
from ..store.settings import parse_config, with_locked
from ..store.trailers import Decision, Step, Trailers
from ..store.workspace import MAIN, Commit, Workspace, format_message
from .harness import Harness
from .impact import IMPACT, ImpactEntry, append_entry
from .steps import RoundStep
from .steps.evaluation import Confirm, Validate, incumbent_recorded, record_incumbent
from .steps.gate import judge_candidate, merge_candidate
from .steps.proposal import Reapply


@dataclass(frozen=True)
class ReviewDecision:
    candidate: str
    """`rNNN-<name>`."""
    decision: Decision
    """`accepted`, or `rejected` (by the person, or by the gate on re-validation)."""
    reason: str
    commit: str
    """The decision's commit on main."""
    revalidated: bool = False
    """`accept`: main had moved, so the candidate was validated again before the verdict."""


def accept(harness: Harness, name: str) -> ReviewDecision:
    """Merge the pending candidate `name`. When main's skills or the evaluation setup changed since
    it was validated, it is first re-applied to main and validated again, and the gate's verdict
    on that validation decides: a candidate it rejects now is tagged rejected, not merged."""
    ws, ctx = harness.ws, harness.steps
    item = find_pending(ws, name)
    if item.decided is not None:
        return _finished(ws, item, Decision.ACCEPTED)
    validated = _validations(ws, item)
    if not incumbent_recorded(ctx.evaluator):
        record_incumbent(ctx, completed_rounds(ws) + 1, f"accept {item.id}: re-validate incumbent")
    steps: tuple[RoundStep, ...] = (Reapply(), Validate(), Confirm())
    for step in steps:
        state = _state(ws, item)
        if state is None:
            return _closed_by_gate(ws, item)
        if not step.done(ctx, state):
            step.run(ctx, state)
    state = _state(ws, item)
    if state is None:
        return _closed_by_gate(ws, item)
    revalidated = _validations(ws, item) != validated
    ctx.publisher.begin_step()
    judged = judge_candidate(ctx.evaluator, state)
    decided = {"decided_by": PERSON, "candidate": item.evidence.sha}
    if judged.accepted:
        again = "re-validated on main's current skills, " if revalidated else ""
        reason = f"accepted by a person after review ({again}{judged.verdict.reason})"
        sha = merge_candidate(ctx, judged, item.branch, reason, **decided)
        ws.delete_branch(item.branch)
        return ReviewDecision(item.id, Decision.ACCEPTED, reason, sha, revalidated)
    reason = f"re-validated on main's current skills before the merge: {judged.verdict.reason}"
    tag = rejected_tag(item.branch)
    where = f"tag {tag} ({judged.tip[:10]})"
    entry = judged.entry(Decision.REJECTED, reason, where, ws.diff(MAIN, judged.tip, "skills"))
    ws.tag(tag, judged.tip, force=True)
    sha = ctx.publisher.commit(
        f"{round_label(item.round)} gate: rejected {item.skill} on re-validation ({judged.verdict.reason})",
        judged.trailers(Decision.REJECTED, candidate=item.evidence.sha),
        {IMPACT: append_entry(ws.read_file(MAIN, IMPACT), entry)},
        body=judged.body(reason),
    )
    ws.delete_branch(item.branch)
    return ReviewDecision(item.id, Decision.REJECTED, reason, sha, revalidated)


def reject(ws: Workspace, name: str, why: str) -> ReviewDecision:
    """Turn the pending candidate `name` down for the person's reason `why`: tagged rejected, and
    the reason in skill-impact.md, which the next proposer reads. Call it holding the lock."""
    why = " ".join(why.split())
    if not why:
        raise WikiskillError('say why the candidate is rejected: --why "..." (the proposer reads it)')
    item = find_pending(ws, name)
    if item.decided is not None:
        return _finished(ws, item, Decision.REJECTED)
    meta, tag, tip = item.evidence.meta, rejected_tag(item.branch), item.tip
    assert tip is not None  # undecided: its branch is still there
    ws.tag(tag, tip, force=True)
    reason = f"rejected by a person: {why}"
    entry = ImpactEntry(
        item.round,
        meta.action or "",
        item.skill,
        Decision.REJECTED,
        reason,
        _rationale(ws, item),
        f"tag {tag} ({tip[:10]})",
        meta.score,
        meta.incumbent,
    )
    message = format_message(
        f"{round_label(item.round)} gate: rejected by a person {item.skill} ({why})",
        Trailers(
            round=item.round,
            step=Step.GATE,
            decision=Decision.REJECTED,
            action=meta.action,
            skill=item.skill,
            score=meta.score,
            incumbent=meta.incumbent,
            decided_by=PERSON,
            candidate=item.evidence.sha,
            cost_usd=0.0,
        ),
        body=reason,
    )
    sha = ws.commit({IMPACT: append_entry(ws.read_file(MAIN, IMPACT), entry)}, message)
    ws.delete_branch(item.branch)
    return ReviewDecision(item.id, Decision.REJECTED, reason, sha)


def set_lock(ws: Workspace, name: str, locked: bool) -> str | None:
    """Add `name` to `skills.locked` (or remove it) in one commit of wikiskill.yaml, with the
        skill's own uncommitted files when locking (a skill written by hand is locked as it is
        committed); None when there was nothing to change (locking a locked skill, unlocking one that is
    not locked). Call it holding the lock."""
    path = ws.root / CONFIG_FILE
    text = read_utf8(path, ConfigError)
    names = parse_config(text, CONFIG_FILE).skills.locked
    folder = f"skills/{name}"
    on_disk = (ws.root / folder / "SKILL.md").is_file()
    if locked and not on_disk and not ws.read_file(MAIN, f"{folder}/SKILL.md"):
        raise WorkspaceError(f"there is no skill {name!r} to lock (`wikiskill skills` lists them)")
    wanted = sorted({*names, name}) if locked else [each for each in names if each != name]
    if wanted != names:
        _replace(path, with_locked(text, wanted))
    paths = [CONFIG_FILE, *([folder] if locked and on_disk else [])]
    if not ws.dirty_paths(*paths):
        return None
    verb = "lock" if locked else "unlock"
    message = format_message(
        f"{verb} {name}: skills.locked {'+' if locked else '-'}= {name}",
        Trailers(round=completed_rounds(ws), step=Step.HUMAN, skill=name, decided_by=PERSON, cost_usd=0.0),
        body=(
            f"The proposer may not patch or retire {name}, and `rollback` reverts it only with --force."
            if locked
            else f"The proposer may change {name} again."
        ),
    )
    return ws.commit_working_tree(paths, message)


def _replace(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _state(ws: Workspace, item: Pending) -> RoundState | None:
    """The pending candidate as a round's candidate branch, for the steps; None once the gate
    closed it (a re-application that conflicts with main rejects it as stale)."""
    tip = ws.head(item.branch)
    return None if tip is None else read_branch(ws, RoundState(item.round), item.branch, tip)


def _validations(ws: Workspace, item: Pending) -> list[str]:
    state = _state(ws, item)
    return [c.sha for c in state.validations] if state else []


def _closed_by_gate(ws: Workspace, item: Pending) -> ReviewDecision:
    gate = next(c for c in ws.log(MAIN) if c.meta.step == Step.GATE and c.meta.round == item.round)
    return ReviewDecision(item.id, gate.meta.decision or Decision.REJECTED, ws.body(gate.sha), gate.sha, True)


def _finished(ws: Workspace, item: Pending, asked: Decision) -> ReviewDecision:
    """A candidate already decided (a run killed after its commit): the branch left is removed."""
    decided: Commit = item.decided  # type: ignore[assignment]
    if decided.meta.decision != asked and decided.meta.decided_by == PERSON:
        raise WorkspaceError(f"{item.id} was already {decided.meta.decision} ({decided.sha[:10]})")
    ws.delete_branch(item.branch)
    return ReviewDecision(item.id, decided.meta.decision or asked, ws.body(decided.sha), decided.sha)


def _rationale(ws: Workspace, item: Pending) -> str:
    propose = next((c for c in ws.log(item.branch) if c.meta.step == Step.PROPOSE), None)
    return ws.body(propose.sha).split("\n\n")[0].strip() if propose else ""
