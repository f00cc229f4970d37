"""The review queue of `gate.review: human`, read from git: each candidate the gate policy accepted
waits on a `pending/rNNN-<name>` branch whose evidence commit (decision `pending`) records the
verdict, until the `accept` or `reject` commit on main names that evidence commit in its
`Wikiskill-Candidate` trailer. A branch whose candidate is named so is decided, whatever is left
of it (a killed `accept` or `reject` removes it on its next run)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import WorkspaceError
from .reads import WorkspaceReads
from .rounds import PENDING_PREFIX, candidate_id, pending_branch, round_label
from .trailers import Decision, Step
from .workspace import MAIN, Commit

REVIEW_FILE = "review.json"
"""In raw/rNNN/ on a pending branch: the verdict's per-task evidence and the cost change."""
PERSON = "person"
"""The `Wikiskill-Decided-By` of a person's decision."""


@dataclass(frozen=True)
class Pending:
    id: str
    """`rNNN-<name>`, as in the branch name."""
    branch: str
    tip: str | None
    """None: decided, and its branch already removed."""
    evidence: Commit
    """The gate's `pending` commit on the branch (a later re-validation commits above it)."""
    decided: Commit | None = None
    """The person's commit on main that accepted or rejected it, if there is one."""

    @property
    def round(self) -> int:
        return self.evidence.meta.round or 0

    @property
    def skill(self) -> str:
        return self.evidence.meta.skill or ""


def pending_candidates(ws: WorkspaceReads, decided_too: bool = False) -> list[Pending]:
    """The candidates waiting for a person, oldest round first (with `decided_too`, also the
    branches of decided ones that a killed command left)."""
    decisions = {
        c.meta.candidate: c
        for c in ws.log(MAIN)
        if c.meta.candidate and c.meta.decision in (Decision.ACCEPTED, Decision.REJECTED)
    }
    found = []
    for branch, tip in sorted(ws.refs(f"refs/heads/{PENDING_PREFIX}").items()):
        evidence = next(
            (c for c in ws.log(branch) if c.meta.step == Step.GATE and c.meta.decision == Decision.PENDING), None
        )
        if evidence is None:  # the gate was killed before it recorded the evidence; its rerun will
            continue
        item = Pending(candidate_id(branch), branch, tip, evidence, decisions.get(evidence.sha))
        if decided_too or item.decided is None:
            found.append(item)
    return sorted(found, key=lambda item: (item.round, item.id))


def find_pending(ws: WorkspaceReads, name: str) -> Pending:
    """The candidate named `rNNN-<name>` or by its skill's name (when one candidate has it): one
    with a `pending/` branch, else the newest that main records a decision on (its branch gone)."""
    every = pending_candidates(ws, decided_too=True)
    matches = _named(every, name)
    if len(matches) == 1:
        return matches[0]
    waiting = ", ".join(item.id for item in every if item.decided is None) or "none"
    if matches:
        raise WorkspaceError(f"{name!r} names {len(matches)} pending candidates; use one of {waiting}")
    decided = _named(_decided(ws), name)
    if decided:
        return decided[0]
    raise WorkspaceError(f"no pending candidate {name!r} (pending: {waiting}; `wikiskill review` lists them)")


def _named(items: list[Pending], name: str) -> list[Pending]:
    return [item for item in items if name in (item.id, item.branch)] or [item for item in items if item.skill == name]


def _decided(ws: WorkspaceReads) -> list[Pending]:
    """The candidates main records a decision on, newest first."""
    found = []
    for commit in ws.log(MAIN):
        meta = commit.meta
        if meta.candidate and meta.decision in (Decision.ACCEPTED, Decision.REJECTED):
            evidence = ws.log(meta.candidate)[0]
            branch = pending_branch(f"skill/{round_label(evidence.meta.round or 0)}-{evidence.meta.skill}")
            found.append(Pending(candidate_id(branch), branch, None, evidence, commit))
    return found
