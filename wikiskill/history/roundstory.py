"""What happened in one round, read back from git: `wikiskill show ROUND`.

Main's first-parent history has the round's rollout, maintain and gate commits; the proposal,
the proposer's transcript and the validation live where the candidate ended: merged into main,
under a `rejected/` tag, on a `pending/` branch waiting for review, or still on its `skill/` branch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import cast

from ..core.errors import WikiskillError
from ..store.evaluations import read_scores
from ..store.rounds import BRANCH_PREFIX, MAIN_SIDE_FILE, PENDING_PREFIX, REJECTED_PREFIX, round_label
from ..store.traces import OutcomeRow
from ..store.trailers import Crossed, Step, Trailers
from ..store.unsound import read_unsound
from ..store.workspace import MAIN, Commit, Workspace

EVALUATIONS = (Step.BASELINE, Step.INCUMBENT, Step.VALIDATE, Step.CONFIRM)
"""The steps whose commits record an evaluation, with its retries."""


@dataclass(frozen=True)
class Retries:
    """What one step's evaluations of a round spent on infrastructure failures (their trailers)."""

    step: Step
    retried: int = 0
    """Task runs tried again."""
    retries: int = 0
    """Tries after the first, all together."""
    left: int = 0
    """Task runs still infra after every retry."""

    def text(self) -> str:
        return (
            f"{self.step.value}: {self.retried} task run(s) retried, {self.retries} retry tries, "
            f"{self.left} left as infra"
        )


@dataclass
class RoundStory:
    number: int
    train_score: float | None = None
    sampled: list[str] = field(default_factory=list)
    maintain_failed: str | None = None
    pages_changed: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    proposer_turns: int = 0
    invalid_outputs: int = 0
    action: str | None = None
    skill: str | None = None
    rationale: str = ""
    proposer_error: str | None = None
    validation: list[OutcomeRow] = field(default_factory=list)
    decision: str | None = None
    reason: str = ""
    score: float | None = None
    incumbent: float | None = None
    incumbent_validation: dict[str, float] = field(default_factory=dict)
    """Main's per-task scores on the same tasks, when the validation recorded them (`sequential`)."""
    looks: str = ""
    """How a sequential verdict stopped: the look, the tasks used of the pool, the boundary crossed."""
    unsound: dict[str, str] = field(default_factory=dict)
    """The tasks the round left out of every split as unsound, with the reason."""
    retries: list[Retries] = field(default_factory=list)
    """Per evaluation step of the round that retried a task or left one infra, what it spent."""

    @property
    def infra(self) -> dict[str, str]:
        """The validation's tasks that failed as infrastructure (left out of the comparison), with the reason."""
        return {
            str(row.get("id")): str(row.get("error") or "") for row in self.validation if row.get("failure") == "infra"
        }


def _step(commits: list[Commit], number: int, step: Step) -> Commit | None:
    """The newest commit of `step` in round `number` (a validation retried later wins)."""
    return next((c for c in commits if c.meta.round == number and c.meta.step == step), None)


def round_story(ws: Workspace, number: int) -> RoundStory:
    main_log = ws.log(MAIN)
    rollout = _step(main_log, number, Step.ROLLOUT)
    if rollout is None:
        raise WikiskillError(f"round {number} has not run in this workspace (see `wikiskill log`)")
    story = RoundStory(number, unsound=read_unsound(ws, rollout.sha))
    label = round_label(number)
    story.train_score = rollout.meta.score
    maintain = _step(main_log, number, Step.MAINTAIN)
    if maintain is not None:
        story.sampled = [s for s in (maintain.meta.sampled or "").split(",") if s]
        if maintain.meta.status == "failed":
            story.maintain_failed = ws.body(maintain.sha)
        story.pages_changed = ws.changed_paths(maintain.parents[0], maintain.sha, "wiki")
    gate = _step(main_log, number, Step.GATE)
    if gate is not None:
        meta = gate.meta
        story.decision, story.reason = (meta.decision.value if meta.decision else None), ws.body(gate.sha)
        story.score, story.incumbent = meta.score, meta.incumbent
        story.action, story.skill = meta.action, meta.skill
        story.looks = looks_text(meta)
    refs = [gate.sha] if gate is not None else []
    for kind, prefix in (("tags", REJECTED_PREFIX), ("heads", BRANCH_PREFIX), ("heads", PENDING_PREFIX)):
        refs += [
            sha
            for name, sha in sorted(ws.refs(f"refs/{kind}/{prefix}").items())
            if name.startswith(f"{prefix}{label}-")
        ]
    _read_proposer(ws, story, refs, label)
    _read_validation(ws, story, refs, label)
    merged = gate.parents[1:] if gate is not None else []  # a merged candidate's own commits
    story.retries = _read_retries(ws, number, [MAIN, *merged, *refs])
    return story


def _read_retries(ws: Workspace, number: int, refs: list[str]) -> list[Retries]:
    """The round's evaluation commits on the first-parent histories of `refs`, each counted once
    (a sequential validation's looks add up)."""
    seen: dict[str, Commit] = {}
    for ref in refs:
        for commit in ws.log(ref):
            if commit.meta.round == number and commit.meta.step in EVALUATIONS and commit.meta.retried is not None:
                seen.setdefault(commit.sha, commit)
    totals: dict[Step, Retries] = {}
    for commit in seen.values():
        meta, step = commit.meta, cast(Step, commit.meta.step)
        before = totals.get(step, Retries(step))
        totals[step] = Retries(
            step,
            before.retried + (meta.retried or 0),
            before.retries + (meta.retries or 0),
            before.left + (meta.infra_left or 0),
        )
    return [totals[step] for step in EVALUATIONS if step in totals]


def _read_proposer(ws: Workspace, story: RoundStory, refs: list[str], label: str) -> None:
    for ref in refs:
        text = ws.read_file(ref, f"raw/{label}/proposer.json")
        if text is None:
            continue
        transcript = json.loads(text)
        turns = transcript.get("turns", [])
        story.proposer_turns = len(turns)
        story.invalid_outputs = sum(1 for turn in turns if turn.get("error"))
        calls = [call for turn in turns for call in turn.get("calls", [])]
        story.reads = [
            str(call["arguments"].get("path"))
            for call in calls
            if call.get("name") == "read_file" and isinstance(call.get("arguments"), dict)
        ]
        story.proposer_error = transcript.get("error")
        outcome = transcript.get("outcome")
        if isinstance(outcome, dict) and isinstance(outcome.get("rationale"), str):
            story.rationale = outcome["rationale"]
        break
    for ref in refs:
        propose = _step(ws.log(ref), story.number, Step.PROPOSE)
        if propose is not None:
            story.action, story.skill = propose.meta.action, propose.meta.skill
            story.rationale = ws.body(propose.sha).split("\n\n")[0].strip()
            break


def _read_validation(ws: Workspace, story: RoundStory, refs: list[str], label: str) -> None:
    for ref in refs:
        text = ws.read_file(ref, f"raw/{label}/val.jsonl")
        if text is not None:
            story.validation = [json.loads(line) for line in text.splitlines() if line.strip()]
            story.incumbent_validation = read_scores(ws.read_file(ref, f"raw/{label}/{MAIN_SIDE_FILE}") or "")
            return


def looks_text(meta: Trailers) -> str:
    """`look 3 of 20: 30 of 200 val tasks, z 2.610 crossed the efficacy bound 2.550` from a
    sequential verdict's trailers; empty for other policies."""
    if meta.look is None or meta.pool is None or not meta.batch:
        return ""
    looks = -(-meta.pool // meta.batch)
    where = f"look {meta.look} of {looks}: {meta.tasks} of {meta.pool} val tasks"
    if meta.crossed is None:
        return f"{where}, z {meta.statistic:.3f} (continues)"
    if meta.crossed is Crossed.POOL_END:
        return f"{where}, pool used up: the paired verdict (z {meta.statistic:.3f}, final bound {meta.boundary:.3f})"
    return f"{where}, z {meta.statistic:.3f} crossed the {meta.crossed.value} bound {meta.boundary:.3f}"
