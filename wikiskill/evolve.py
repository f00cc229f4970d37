"""The evolution loop, resumable at any step because its state is read from git.

    baseline (once)  validate main's skills on val -> incumbent score
    round k:         rollout -> maintain -> propose -> validate -> gate -> tag round/k
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from .errors import WorkspaceError
from .harness import Harness
from .history import ROUND_TAG, completed_rounds, incumbent_score, round_label, round_state
from .workspace import MAIN, format_message

RUN_FILE = "run.json"


@dataclass
class EvolveResult:
    rounds_completed: int
    target: int
    incumbent: float
    decisions: list[str]
    stopped_early: bool


def check_human_edits(harness: Harness, commit_them: bool) -> None:
    """Refuse to evolve over uncommitted edits, or commit them as a `human` step."""
    ws = harness.ws
    if ws.dirty_paths("raw"):
        raise WorkspaceError("raw/ has uncommitted changes; it is written by wikiskill only "
                             "(restore it with `git checkout -- raw && git clean -fd raw`)")
    dirty = ws.dirty_paths("skills", "wiki")
    if not dirty:
        return
    if not commit_them:
        shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        raise WorkspaceError(f"uncommitted edits in {shown}: commit them, discard them, "
                             "or pass --commit-human-edits to record them as a human step")
    round_number = completed_rounds(ws)
    ws.commit_working_tree(["skills", "wiki"], format_message(
        f"human edits: {len(dirty)} file(s) under skills/ and wiki/",
        {"Round": round_number, "Step": "human", "Cost-USD": "0"}))


def _run_target(harness: Harness, rounds: int, done: int) -> int:
    """`--rounds N` means N completed rounds for this run, counting rounds an interrupted run
    already finished; the run's start is kept in .wikiskill/run.json until it completes.

    A run killed after its last round but before it removed run.json is complete: the same
    command then has nothing left to do (done == start + rounds).
    """
    path = harness.ws.state_dir / RUN_FILE
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
        start, before = int(run["start"]), int(run["rounds"])
    except (FileNotFoundError, ValueError, KeyError, TypeError):
        start, before = done, 0
    if not start <= done <= start + before:
        start = done
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"start": start, "rounds": rounds}), encoding="utf-8")
    os.replace(tmp, path)
    return start + rounds


def ensure_baseline(harness: Harness) -> None:
    ws = harness.ws
    first = next((c for c in ws.log(MAIN) if c.trailer("Step") == "baseline" and c.trailer("Round") == "0"), None)
    if first is None:
        harness.baseline(0, first=True)
    elif "baseline" not in ws.refs("refs/tags/baseline"):
        ws.tag("baseline", first.sha)


def run_round(harness: Harness, number: int, incumbent: float) -> str:
    """Run whatever steps of round `number` are not yet in git; return the gate's decision."""
    ws = harness.ws
    state = round_state(ws, number)
    if state.branch is not None and state.proposal is None:
        ws.delete_branch(state.branch)  # cut, but the proposal commit never landed
        state.branch = None
    if state.gate is None:
        if state.rollout is None:
            harness.rollout(number)
        if state.maintain is None:
            harness.maintain(number)
        if state.branch is None:
            harness.propose(number, incumbent)
            state = round_state(ws, number)
        if state.gate is None and state.branch is not None:
            if state.validation is None:
                harness.validate(number, state.branch)
            harness.gate(number, state.branch, incumbent)
    elif state.branch is not None:
        ws.delete_branch(state.branch)  # the gate committed, then the run stopped
    ws.tag(f"{ROUND_TAG}{number:03d}", ws.head(MAIN), force=True)
    ws.pack_objects()
    gate = round_state(ws, number).gate
    return gate.trailer("Decision") if gate else "none"


def evolve(harness: Harness, rounds: int, commit_human_edits: bool = False) -> EvolveResult:
    """Run (or resume) `rounds` rounds; stop early once the incumbent scores 1.0."""
    ws = harness.ws
    with ws.lock("wikiskill evolve"):
        ws.recover()
        check_human_edits(harness, commit_human_edits)
        harness.benchmark.prepare(("val", "train"))  # every game this run plays, under one progress bar
        done = completed_rounds(ws)
        target = _run_target(harness, rounds, done)
        ensure_baseline(harness)
        decisions: list[str] = []
        incumbent = 0.0
        while done < target:
            check_human_edits(harness, commit_human_edits)  # a person may edit during a long run
            known = incumbent_score(ws)
            incumbent = known if known is not None else harness.baseline(done + 1, first=False)
            if incumbent >= 1.0:
                break
            decisions.append(run_round(harness, done + 1, incumbent))
            done += 1
            harness.reporter.info(f"{round_label(done)} complete ({done} of {target}): {decisions[-1]}")
        # Only now, with its last round reported, is the run over: killed before this line, the
        # same command finds the run complete; after it, the person has seen it end.
        (ws.state_dir / RUN_FILE).unlink(missing_ok=True)
        final = incumbent_score(ws)
        return EvolveResult(done, target, final if final is not None else incumbent, decisions,
                            stopped_early=done < target)
