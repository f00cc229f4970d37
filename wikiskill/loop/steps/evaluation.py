"""Steps that evaluate skills on val: the incumbent on main, the candidate on its branch, and
(policy `confirm`) the candidate once more with fresh seeds."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from ...core.errors import ValidationIndecisive
from ...store.evaluations import Evaluation, evaluation_at
from ...store.rounds import round_label
from ...store.trailers import Action, Decision, Step, Trailers
from ...store.workspace import MAIN, Commit
from .indecisive import indecisive, refuse_infra, refuse_infra_incumbent
from .looks import looks_finished, run_looks
from .summary import of_evaluation

if TYPE_CHECKING:
    from ...store.rounds import RoundState
    from ..evaluating import Evaluator
    from ..harness import StepContext


def record_incumbent(ctx: StepContext, number: int, what: str | None = None) -> Evaluation:
    """Evaluate main's skills under the current setup and commit the result on main (round 0 is
    the `baseline`, tagged; later rounds re-validate the `incumbent` after main or the settings
    changed). `what` names the step where it is done for something other than round `number`
    (`accept`), which it then names in place of that round."""
    reader, publisher = ctx.reader, ctx.publisher
    publisher.begin_step()
    first = number == 0
    what = what or ("baseline" if first else f"{round_label(number)} re-validate incumbent")
    if not first:
        changed = val_change(ctx)
        if changed:
            reader.reporter.info(f"{what}: {changed}")
    evaluated = ctx.evaluator.evaluate(MAIN, "val", f"{what}: val")
    kept = ctx.evaluator.kept(MAIN, "val")
    refuse_infra_incumbent(reader.config.gate, evaluated.evaluation, f"the {what} of main's skills", kept)
    path = "raw/baseline/val.jsonl" if first else f"raw/{round_label(number)}/incumbent-val.jsonl"
    sha = publisher.commit(
        f"{what}: val {of_evaluation(evaluated.evaluation, reader.interactive)}",
        Trailers(round=number, step=Step.BASELINE if first else EnsureIncumbent.kind, **evaluated.trailers(path)),
        {path: evaluated.outcomes},
    )
    if first:
        publisher.tag("baseline", sha)
    return evaluated.evaluation


def val_change(ctx: StepContext) -> str | None:
    """How the val split differs from the one main was last validated on (tasks deleted from the
    suite, or added), in words; None when it holds the same tasks."""
    reader = ctx.reader
    last = next(
        (
            found
            for commit in reader.ws.log(MAIN)
            if commit.meta.step in (Step.BASELINE, Step.INCUMBENT)
            and (found := evaluation_at(reader.ws, commit)) is not None
        ),
        None,
    )
    if last is None:
        return None
    now = [task.id for task in reader.tasks("val")]
    gone = [task_id for task_id in last.tasks if task_id not in set(now)]
    new = [task_id for task_id in now if task_id not in set(last.tasks)]
    if not gone and not new:
        return None
    parts = [f"gone: {', '.join(gone)}"] if gone else []
    parts += [f"new: {', '.join(new)}"] if new else []
    return (
        f"val has {len(now)} tasks now, {len(last.tasks)} when main was last validated ({'; '.join(parts)}); "
        "its tasks are part of the evaluation fingerprint, so main is validated again on these"
    )


def incumbent(evaluator: Evaluator) -> Evaluation:
    """Main's evaluation under the current setup (EnsureIncumbent has run before anyone asks)."""
    found = evaluator.recorded(MAIN)
    if found is None or not _usable(evaluator, found[1]):
        raise ValidationIndecisive("main has no evaluation under the current settings; run `wikiskill evolve` again")
    return found[1]


def incumbent_recorded(evaluator: Evaluator) -> bool:
    """Whether git records an evaluation of main the gate can use."""
    found = evaluator.recorded(MAIN)
    return found is not None and _usable(evaluator, found[1])


def _usable(evaluator: Evaluator, evaluation: Evaluation) -> bool:
    """A sequential merge records main's evaluation on the tasks its verdict used: enough for
    a batched policy, which extends it batch by batch; the others compare every val task."""
    reader = evaluator.reader
    return reader.policy.plan().looks is not None or evaluation.size == len(reader.tasks("val"))


class EnsureIncumbent:
    """Main's skills must have an evaluation under the current setup: after a rollback, a hand
    edit or changed settings (model, prompts, max_steps, ...) the old score no longer applies."""

    kind: ClassVar[Step] = Step.INCUMBENT

    def done(self, ctx: StepContext, state: RoundState) -> bool:
        return incumbent_recorded(ctx.evaluator)

    def run(self, ctx: StepContext, state: RoundState) -> None:
        record_incumbent(ctx, state.number)


def current_evaluation(
    evaluator: Evaluator, state: RoundState, commits: list[Commit], first_repeat: int = 0
) -> tuple[Commit, Evaluation] | None:
    """The newest of `commits` that evaluated exactly the branch tip's skills under the current
    setup (any other is stale: the branch moved, or the settings changed)."""
    if state.tip is None:
        return None
    expected = evaluator.fingerprint(state.tip, "val", first_repeat)
    for commit in commits:
        if commit.meta.fingerprint == expected:
            evaluation = evaluation_at(evaluator.reader.ws, commit)
            if evaluation is not None:
                return commit, evaluation
    return None


def _evaluate_candidate(ctx: StepContext, state: RoundState, step: Step, first_repeat: int, file: str) -> None:
    label, branch = round_label(state.number), state.candidate
    ctx.publisher.begin_step()
    with indecisive(ctx.publisher, state, step):
        evaluated = ctx.evaluator.evaluate(branch, "val", f"{label} {step.value}: val", first_repeat)
    path = f"raw/{label}/{file}"
    kept = ctx.evaluator.kept(branch, "val", first_repeat)
    refuse_infra(ctx, state, step, evaluated.evaluation, incumbent(ctx.evaluator), {path: evaluated.outcomes}, kept)
    ctx.publisher.commit(
        f"{label} {step.value}: val {of_evaluation(evaluated.evaluation, ctx.reader.interactive)}",
        Trailers(round=state.number, step=step, **evaluated.trailers(path)),
        {path: evaluated.outcomes},
        branch=branch,
    )


class Validate:
    """The candidate on val; with a batched policy (`sequential`), a batch at a time with main
    on the same tasks, until a look stops it (`looks.py`)."""

    kind: ClassVar[Step] = Step.VALIDATE

    def done(self, ctx: StepContext, state: RoundState) -> bool:
        if state.branch is None:
            return True
        looks = ctx.reader.policy.plan().looks
        if looks is not None:
            return looks_finished(ctx.evaluator, state, looks)
        return current_evaluation(ctx.evaluator, state, state.validations) is not None

    def run(self, ctx: StepContext, state: RoundState) -> None:
        looks = ctx.reader.policy.plan().looks
        if looks is not None:
            run_looks(ctx, state, looks)
        else:
            _evaluate_candidate(ctx, state, self.kind, 0, "val.jsonl")


class Confirm:
    """A policy whose plan confirms (`confirm`): a candidate that passed its validation runs val
    again with fresh seeds."""

    kind: ClassVar[Step] = Step.CONFIRM

    def done(self, ctx: StepContext, state: RoundState) -> bool:
        policy, evaluator = ctx.reader.policy, ctx.evaluator
        if state.branch is None or not policy.plan().confirms:
            return True
        validated = current_evaluation(evaluator, state, state.validations)
        retire = state.proposal is not None and state.proposal.meta.action == Action.RETIRE
        if validated is None or policy.judge(validated[1], incumbent(evaluator), retire).decision != Decision.ACCEPTED:
            return True
        repeats = ctx.reader.config.gate.repeats
        return current_evaluation(evaluator, state, state.confirmations, repeats) is not None

    def run(self, ctx: StepContext, state: RoundState) -> None:
        _evaluate_candidate(ctx, state, self.kind, ctx.reader.config.gate.repeats, "confirm-val.jsonl")
