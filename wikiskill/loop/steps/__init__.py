"""The steps of a round, each one class: `done` asks git whether the step's commit exists (so a
killed run resumes exactly where it stopped), `run` does it and publishes one commit.

    rollout      the task agent on every train task with main's skills          -> main
    maintain     sampled traces -> wiki pages (checked against the page model)   -> main
    consolidate  every `wiki.consolidate_every` rounds: duplicates merged, stale
                 pages retired                                                    -> main
    incumbent    main's skills evaluated under the current setup, skipped when git
                 records it (rerun after a rollback, a hand edit, new settings, or
                 a wiki change the agent reads with `agent.wiki_access`)          -> main
    propose      one skill change on branch skill/rNNN-<name>, or a recorded
                 no_action / invalid                                              -> branch
    incumbent    again: main may have moved since
    reapply      main moved after the branch was cut: main merged into it        -> branch
    validate     the candidate on val, under the incumbent's setup; a batched
                 policy (`sequential`) commits one look per batch, main on the
                 same tasks, until a look stops it                               -> branch
    confirm      (policy `confirm`) a passing candidate again with fresh seeds   -> branch
    gate         the policy's verdict: merge, or tag rejected/...                -> main

A step added to the round is one class here and one entry in `round_steps`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol

from ...store.trailers import Step
from .evaluation import Confirm, EnsureIncumbent, Validate
from .experience import Consolidate, Maintain, Rollout
from .gate import Gate
from .proposal import Propose, Reapply

if TYPE_CHECKING:
    from ...store.rounds import RoundState
    from ..harness import Harness

__all__ = ["RoundStep", "round_steps", "EnsureIncumbent"]


class RoundStep(Protocol):
    kind: ClassVar[Step]
    """The `Wikiskill-Step` of the commit that `run` publishes (a proposal that never reaches
    validation is closed by a `gate` commit instead)."""

    def done(self, harness: Harness, state: RoundState) -> bool: ...

    def run(self, harness: Harness, state: RoundState) -> None: ...


def round_steps() -> list[RoundStep]:
    return [
        Rollout(),
        Maintain(),
        Consolidate(),
        EnsureIncumbent(),
        Propose(),
        EnsureIncumbent(),
        Reapply(),
        Validate(),
        Confirm(),
        Gate(),
    ]
