"""A validation that could not complete is indecisive, not rejected."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ...core.errors import BudgetExceeded, ModelError, ValidationIndecisive
from ...store.rounds import round_label
from ...store.trailers import Decision, Step, Trailers

if TYPE_CHECKING:
    from ...store.rounds import RoundState
    from ..harness import Harness


@contextmanager
def indecisive(harness: Harness, state: RoundState, step: Step) -> Iterator[None]:
    """A validation the provider or the budget cut short is committed on the branch as
    indecisive, never merged, and retried by the next `evolve`."""
    label = round_label(state.number)
    try:
        yield
    except (ModelError, BudgetExceeded) as exc:
        reason = " ".join(str(exc).split())
        harness.commit(f"{label} {step.value}: indecisive ({reason})",
                       Trailers(round=state.number, step=step, decision=Decision.INDECISIVE),
                       branch=state.branch, body=reason)
        raise ValidationIndecisive(f"{label}'s {step.value} could not complete ({reason}); nothing was merged; "
                                   "run `wikiskill evolve` again to retry it") from exc
