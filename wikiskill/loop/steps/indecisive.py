"""A validation that could not complete is indecisive, not rejected: the provider or the budget
cut it short, or too many of its tasks failed as infrastructure."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ...core.errors import BudgetExceeded, ModelError, ValidationIndecisive
from ...store.evaluations import Evaluation
from ...store.rounds import round_label
from ...store.trailers import Decision, Step, Trailers
from ..evaluating import Kept
from ..gate_policies import infra_problem
from ..settings import GateSettings

if TYPE_CHECKING:
    from ...store.rounds import RoundState
    from ..harness import StepContext
    from ..publishing import Publisher


@contextmanager
def indecisive(publisher: Publisher, state: RoundState, step: Step) -> Iterator[None]:
    """A validation the provider or the budget cut short is committed on the branch as
    indecisive, never merged, and retried by the next `evolve`."""
    try:
        yield
    except (ModelError, BudgetExceeded) as exc:
        error = _record(publisher, state, step, " ".join(str(exc).split()))
        for note in getattr(exc, "__notes__", []):
            error.add_note(note)
        raise error from exc


def refuse_infra(
    ctx: StepContext,
    state: RoundState,
    step: Step,
    candidate: Evaluation,
    incumbent: Evaluation | None,
    outcomes: dict[str, str],
    kept: Kept,
) -> None:
    """A validation with more infrastructure failures than `gate.max_infra_share` allows is
    committed on the branch as indecisive, with its per-task `outcomes` files (each failure's
    reason in them) but no evaluation: the next `evolve` runs it again, its scored tasks from
    the result cache and the failed ones anew (they are never kept there), as the error says."""
    problem = infra_problem(ctx.reader.config.gate, candidate, incumbent)
    if problem is not None:
        raise _record(ctx.publisher, state, step, problem, outcomes, kept)


def refuse_infra_incumbent(settings: GateSettings, evaluation: Evaluation, what: str, kept: Kept) -> None:
    """Main's own evaluation past the share: nothing is committed, the next `evolve` retries it,
    its scored tasks from the result cache."""
    problem = infra_problem(settings, evaluation)
    if problem is not None:
        raise ValidationIndecisive(
            f"{what} could not complete ({problem}); nothing was recorded; {kept.text('evolve')}"
        )


def _record(
    publisher: Publisher,
    state: RoundState,
    step: Step,
    reason: str,
    changes: dict[str, str] | None = None,
    kept: Kept | None = None,
) -> ValidationIndecisive:
    label = round_label(state.number)
    publisher.commit(
        f"{label} {step.value}: indecisive ({reason})",
        Trailers(round=state.number, step=step, decision=Decision.INDECISIVE),
        dict(changes or {}),
        branch=state.candidate,
        body=reason,
    )
    again = kept.text("evolve") if kept is not None else "run `wikiskill evolve` again to retry it"
    return ValidationIndecisive(f"{label}'s {step.value} could not complete ({reason}); nothing was merged; {again}")
