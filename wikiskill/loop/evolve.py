"""The evolution loop, resumable at any step because its state is read from git.

baseline (once)  validate main's skills on val -> the first incumbent
round k:         the steps of wikiskill/loop/steps (rollout -> maintain -> propose -> validate
                 -> gate, with the checks that keep every verdict sound) -> tag round/k
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..core.config import CONFIG_FILE
from ..core.errors import WorkspaceError
from ..integrations.tracking import open_tracker
from ..store.rounds import ROUND_TAG, completed_rounds, incumbent_score, leftover_branches, round_label, round_state
from ..store.trailers import Decision, Step, Trailers
from ..store.workspace import MAIN, Workspace, format_message
from ..telemetry.spans import round_span, step_span
from .estimate import check_round_budget
from .harness import Harness
from .progress_file import recording
from .soundness import leave_out_unsound
from .steps import round_steps
from .steps.evaluation import incumbent, incumbent_recorded, record_incumbent


@dataclass
class EvolveResult:
    rounds_completed: int
    """Rounds completed in the workspace, this run's and every earlier one's."""
    target: int
    incumbent: float
    decisions: list[Decision | None]
    """Each round's gate decision, in order (None: the round closed without one)."""
    stopped_early: bool


def commit_settings(ws: Workspace) -> None:
    """Commit wikiskill.yaml as a `settings` step when it differs from main's, the diff in the body,
    so the history shows what each round ran under. Settings are no skill or page a person might
    want kept out, so they are committed without `--commit-human-edits`."""
    text = (ws.root / CONFIG_FILE).read_text(encoding="utf-8")
    before = ws.read_file(MAIN, CONFIG_FILE) or ""
    if text == before:
        return
    diff = difflib.unified_diff(
        before.splitlines(keepends=True), text.splitlines(keepends=True), f"a/{CONFIG_FILE}", f"b/{CONFIG_FILE}"
    )
    round_number = completed_rounds(ws)
    ws.commit_working_tree(
        [CONFIG_FILE],
        format_message(
            f"settings: {CONFIG_FILE} changed before round {round_number + 1}",
            Trailers(round=round_number, step=Step.SETTINGS, cost_usd=0.0),
            "".join(diff).rstrip("\n"),
        ),
    )


def check_human_edits(ws: Workspace, commit_them: bool) -> None:
    """Refuse to evolve over uncommitted edits, or commit them as a `human` step."""
    if ws.dirty_paths("raw"):
        raise WorkspaceError(
            "raw/ has uncommitted changes; it is written by wikiskill only "
            "(restore it with `git checkout -- raw && git clean -fd raw`)"
        )
    dirty = ws.dirty_paths("skills", "wiki")
    if not dirty:
        return
    if not commit_them:
        shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        raise WorkspaceError(
            f"uncommitted edits in {shown}: commit them, discard them, "
            "or pass --commit-human-edits to record them as a human step"
        )
    round_number = completed_rounds(ws)
    ws.commit_working_tree(
        ["skills", "wiki"],
        format_message(
            f"human edits: {len(dirty)} file(s) under skills/ and wiki/",
            Trailers(round=round_number, step=Step.HUMAN, cost_usd=0.0),
        ),
    )


@contextmanager
def holding(ws: Workspace, commit_human_edits: bool) -> Iterator[None]:
    """The workspace held for one evolve, checked once, before its benchmark loads: no other
    writer; what a killed run left unfinished finished first (files behind main after a kill are
    wikiskill's own publish, not a person's edits, and no person is asked to clean up after it;
    the branch of a candidate its gate decided is deleted);
    a person's uncommitted edits refused, or committed as a `human` step."""
    with ws.writing("wikiskill evolve"):
        for branch in leftover_branches(ws):
            ws.delete_branch(branch)
        check_human_edits(ws, commit_human_edits)
        yield


def rounds_plan(ws: Workspace, rounds: int) -> str:
    """What `--rounds N` will do, said before the first round. The rule: N more completed rounds
    from now; a round an interrupted run left unfinished is finished first, as the first of the N."""
    first = completed_rounds(ws) + 1
    span = round_label(first) if rounds == 1 else f"{round_label(first)} to {round_label(first + rounds - 1)}"
    if round_state(ws, first).started:
        return f"resuming round {first} (interrupted); it counts as the first of these {rounds} round(s): {span}"
    return f"running {rounds} round(s): {span}"


def ensure_baseline(harness: Harness) -> None:
    """Validate main's skills once, before round 1, as the tagged `baseline`."""
    ws = harness.ws
    first = next((c for c in ws.log(MAIN) if c.meta.step == Step.BASELINE and c.meta.round == 0), None)
    if first is None:
        record_incumbent(harness.steps, 0)
    elif "baseline" not in ws.refs("refs/tags/baseline"):
        ws.tag("baseline", first.sha)


def run_round(harness: Harness, number: int) -> Decision | None:
    """Run whatever steps of round `number` are not yet in git, tag it; return its decision."""
    ws, ctx = harness.ws, harness.steps
    for step in round_steps(harness.config.steps):
        state = round_state(ws, number)
        if state.closed:
            break
        if not step.done(ctx, state):
            with step_span(step.kind, number):
                step.run(ctx, state)
    state = round_state(ws, number)
    if state.branch is not None:
        ws.delete_branch(state.branch)  # the gate committed, then the run stopped
    ws.tag(f"{ROUND_TAG}{number:03d}", ws.resolve(MAIN), force=True)
    ws.pack_objects()
    return state.gate.meta.decision if state.gate else None


def evolve(harness: Harness, rounds: int, commit_human_edits: bool = False) -> EvolveResult:
    """Hold the workspace (`holding`) and run the rounds."""
    with holding(harness.ws, commit_human_edits):
        return run_rounds(harness, rounds, commit_human_edits)


def run_rounds(harness: Harness, rounds: int, commit_human_edits: bool = False) -> EvolveResult:
    """Run `rounds` more rounds in a workspace already held; a round an interrupted run started is
    finished first and counts as the first of them. A new round is not started once the incumbent
    scores 1.0 on every val task. Its progress is kept in the progress file meanwhile."""
    with recording(harness):
        return _run_rounds(harness, rounds, commit_human_edits)


def _run_rounds(harness: Harness, rounds: int, commit_human_edits: bool) -> EvolveResult:
    ws = harness.ws
    leave_out_unsound(harness)  # first: the split it leaves decides every setup after it
    reporter = harness.reading.reporter
    tracker = open_tracker(ws, harness.config, reporter)  # off for this command if unreachable
    harness.benchmark.prepare(("val", "train"))  # every game this run plays, under one progress bar
    done = completed_rounds(ws)
    target = done + rounds
    reporter.info(rounds_plan(ws, rounds))
    check_round_budget(harness.evaluating, done + 1)  # the baseline is part of round 1's spend
    commit_settings(ws)  # once every check has passed: a refused run writes nothing
    with step_span(Step.BASELINE, 0):
        ensure_baseline(harness)
    tracker.sync()
    decisions: list[Decision | None] = []
    stopped_early = False
    while done < target:
        check_human_edits(ws, commit_human_edits)  # a person may edit during a long run
        number = done + 1
        if decisions:
            check_round_budget(harness.evaluating, number)
        with round_span(number):
            if not round_state(ws, number).started:
                if not incumbent_recorded(harness.evaluating):
                    with step_span(Step.INCUMBENT, number):
                        record_incumbent(harness.steps, number)
                main_eval = incumbent(harness.evaluating)  # a sequential gate may have validated it on part of val
                if main_eval.mean >= 1.0 and main_eval.size >= len(harness.benchmark.tasks("val")):
                    stopped_early = True
                    break
            decisions.append(run_round(harness, number))
        done = number
        tracker.sync()
        reporter.info(f"{round_label(done)} complete ({len(decisions)} of {rounds}): {decisions[-1] or 'none'}")
    tracker.finish()
    final = harness.evaluating.recorded(MAIN)
    score = final[1].mean if final else incumbent_score(ws, harness.config.agent.wiki_access) or 0.0
    return EvolveResult(done, target, score, decisions, stopped_early)
