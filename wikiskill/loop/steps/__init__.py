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

Each step is handed a `StepContext` (`loop/harness.py`): the `reader` for what it reads, the
`evaluator` for what it runs and the `publisher` for its commit; the helpers each take only the
one they use. A built-in step is one class here and one entry in `round_steps`; a step of one's
own (`AddedStep`) is a plugin's entry point in `wikiskill.round_steps` or a class's dotted path,
named in wikiskill.yaml's `steps`, and runs after the built-in step its `after` names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Protocol

from ...core.errors import ConfigError
from ...core.parts import ROUND_STEP
from ...core.registry import Registry
from ...store.trailers import Step
from .evaluation import Confirm, EnsureIncumbent, Validate
from .experience import Consolidate, Maintain, Rollout
from .gate import Gate
from .proposal import Propose, Reapply

if TYPE_CHECKING:
    from ...store.rounds import RoundState
    from ..harness import StepContext

__all__ = ["ROUND_STEPS", "AddedStep", "RoundStep", "round_steps", "EnsureIncumbent"]


class RoundStep(Protocol):
    kind: ClassVar[Step]
    """The `Wikiskill-Step` of the commit that `run` publishes (a proposal that never reaches
    validation is closed by a `gate` commit instead)."""

    def done(self, ctx: StepContext, state: RoundState) -> bool: ...

    def run(self, ctx: StepContext, state: RoundState) -> None: ...


class AddedStep(RoundStep, Protocol):
    """A step of one's own that each round runs too. Its commits are `Wikiskill-Step: added`
    (`kind`); `done` finds its own in git, so a killed run resumes after it like after any step."""

    after: ClassVar[Step]
    """The built-in step it runs after (the first of them, for `incumbent`)."""


ROUND_STEPS = Registry(ROUND_STEP, AddedStep)


def round_steps(added: Sequence[str] = ()) -> list[RoundStep]:
    """The round's steps, with the `added` ones (the names of `steps`) each after its `after`."""
    steps = _built_in_steps()
    for name in added:
        step = ROUND_STEPS.load(name)
        kinds = [built.kind for built in steps]
        if step.kind is not Step.ADDED:
            raise ConfigError(f"steps: {name!r} commits as {step.kind!r}; a step of one's own commits as 'added'")
        if step.after not in kinds:
            raise ConfigError(f"steps: {name!r} runs after {step.after!r}, which is no step of a round")
        at = kinds.index(step.after) + 1
        while at < len(steps) and steps[at].kind is Step.ADDED:  # those named before it stay before it
            at += 1
        steps.insert(at, step())
    return steps


def _built_in_steps() -> list[RoundStep]:
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
