"""The loop's sections of wikiskill.yaml: what a candidate must show to be merged (`gate`, with
the chosen policy's settings of its own) and which traces the maintainer sees (`sampling`). In
core's layer: it imports only `core`, and reads what a policy declares of itself through its class."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from ..core.parts import GATE_POLICY
from ..core.registry import import_class
from ..core.section import Section


class ReviewMode(StrEnum):
    """Who has the last word on a candidate the gate policy accepts (`gate.review`)."""

    AUTO = "auto"
    """The gate merges it."""
    HUMAN = "human"
    """It waits as `pending/rNNN-<name>` for `wikiskill accept` or `wikiskill reject`."""


class SamplingSettings(Section):
    max_failures: int = Field(5, ge=0)
    """Failed traces given to the maintainer each round."""
    max_successes: int = Field(3, ge=0)
    """Successful traces given to the maintainer each round."""
    max_chars: int = Field(15_000, ge=500)
    """Each sampled trace is cut to this many characters."""
    seed: int = 0
    """Seed of the trace sampler (mixed with the round number)."""


class CostRule(StrEnum):
    """How the gate weighs what a candidate costs per val task (`gate.cost`; docs/gate.md)."""

    IGNORE = "ignore"
    """On score alone."""
    TIEBREAK = "tiebreak"
    """A candidate no worse than main that is shown cheaper by `cost_margin` is accepted too."""
    BOUND = "bound"
    """A score gain is accepted only when the cost is shown to grow by at most `max_cost_increase`."""


class CostUnit(StrEnum):
    """What a val task's cost is counted in (`gate.cost_unit`)."""

    TOKENS = "tokens"
    USD = "usd"
    """The priced cost, where the model has a price."""


Own = TypeVar("Own", bound=BaseModel)


def policy_class(name: str) -> type | None:
    """The class `gate.policy` names, None when it cannot be imported (loading it for the gate
    says why); what it declares of itself (`contracts.gate.GatePolicy`) decides its settings."""
    try:
        return import_class(GATE_POLICY.path(name))
    except (ImportError, ValueError):
        return None


def _has_level(name: str) -> bool:
    return bool(getattr(policy_class(name), "has_level", False))


class GateSettings(Section):
    policy: Annotated[str, GATE_POLICY] = GATE_POLICY.default
    """How much evidence a merge needs: `strict` (the paper's rule: candidate mean > incumbent
    mean, compared exactly), `paired` (the tasks show, at `confidence`, a mean per-task gain
    above `margin`), `confirm` (strict, then strict again on a fresh evaluation with new seeds),
    `no_regression` (strict, losing at most `max_broken` tasks main solved) or `sequential`
    (`paired`'s evidence, gathered `batch` tasks at a time: it stops as soon as a
    group-sequential test can accept or rule out a gain; docs/gate.md); or the dotted
    path of a class of your own following `protocols.GatePolicy`, e.g. `mypkg.gates:MyPolicy`
    (an installed module or one on `PYTHONPATH`)."""
    confidence: float = Field(0.95, gt=0.5, lt=1.0)
    """`paired`, `sequential`: confidence level of the interval (1 - the tests' significance
    level); `sequential` keeps its false-merge rate over all its looks at most 1 - this."""
    margin: float = Field(0.0, ge=0.0)
    """`paired`, `sequential`: the mean per-task gain the candidate must be shown to exceed: the lower bound
    of the one-sided `confidence` interval of the gain must be above it (not the point
    estimate), on pass/fail and graded scores alike."""
    batch: int = Field(10, ge=1)
    """`sequential`: validation tasks added per look (the val split, `splits.val` tasks, is the
    pool; its order is the order of the batches). A pool no larger than one batch is one look:
    `paired` at `confidence`."""
    max_broken: int = Field(0, ge=0)
    """`no_regression`: the most validation tasks that main solved the candidate may lose."""
    repeats: int = Field(1, ge=1)
    """Evaluate every validation task this many times (seeds `seed` ... `seed+N-1`) and average per
    task: for agents that are not deterministic (temperature above 0)."""
    seed: int = 0
    """Seed of the bootstrap and permutation resampling of `paired` and of `sequential`'s last look
    (on scores that are not pass/fail)."""
    max_infra_share: float = Field(0.10, ge=0.0, le=1.0)
    """The largest share of a validation's tasks that may fail as infrastructure (a check that
    crashed or wrote no result, an image that would not build) on either side: such tasks are
    left out of the comparison on both sides; past this share the validation is `indecisive`,
    never merged, and the next `evolve` retries it."""
    cost: CostRule = CostRule.IGNORE
    """How the per-task cost of the candidate's validation counts: `ignore` (score alone),
    `tiebreak` (a candidate not worse than main by `noninferiority` and cheaper by `cost_margin`
    is accepted; every test then runs at half the significance level, so the false-merge rate
    stays at 1 - `confidence`) or `bound` (a score gain is accepted only when the cost grows by at
    most `max_cost_increase`). docs/gate.md."""
    cost_unit: CostUnit = CostUnit.TOKENS
    """What a task's cost is counted in: `tokens` (every model call of the task agent) or `usd`
    (the priced cost, for priced models)."""
    noninferiority: float = Field(0.02, ge=0.0, lt=1.0)
    """`tiebreak`: how much lower a cheaper candidate's mean score may be: the one-sided lower bound
    of its gain must be above minus this (`strict`: the means must be equal)."""
    cost_margin: float = Field(0.1, ge=0.0, lt=1.0)
    """`tiebreak`: the share by which the per-task cost must be shown lower (0.1: at most 90% of
    main's)."""
    max_cost_increase: float = Field(0.1, ge=0.0)
    """`bound`: the share by which the per-task cost may grow with a score gain (0.1: at most 110%
    of main's), shown at `confidence`."""
    alpha_budget: float | None = Field(None, gt=0.0, lt=0.5)
    """The family-wise error of the whole run: the chance that any of its merges is of a change
    that does nothing, at most this over every round on one val split (`paired`, `sequential`
    or a policy of your own with a confidence level). Each verdict runs at its share of it (the
    online fallback rule, docs/gate.md) instead of at `confidence`; each gate commit records what
    it spent and what is left, and `audit` replays it. Empty: every round at `confidence`."""
    alpha_rounds: int = Field(20, ge=1)
    """`alpha_budget`: the verdicts over which 90% of the budget is spread evenly (the rest is
    halved for each verdict after them)."""
    review: ReviewMode = ReviewMode.AUTO
    """`auto`: a candidate the policy accepts is merged. `human`: it is kept as
    `pending/rNNN-<name>` with the gate's evidence, and evolution goes on; a person merges it with
    `wikiskill accept NAME` (validated again first when main moved) or turns it down with
    `wikiskill reject NAME --why TEXT`; `wikiskill review` lists the queue (docs/review.md)."""
    require_load: bool = False
    """An agent that loads skills on demand (a coding CLI): a candidate whose changed skill it
    never loaded during validation is rejected even when it scored higher (the gain did not
    come from the skill). False: such a gain is merged and flagged `never loaded`."""

    _own: dict[str, object] = PrivateAttr(default_factory=dict)
    """The chosen policy's settings of its own (`GatePolicy.Settings`), as written."""

    def own(self, model: type[Own]) -> Own:
        """The chosen policy's settings of its own, as its `Settings` model."""
        return model.model_validate(self._own)

    @model_serializer(mode="wrap")
    def _dump_own(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The settings of its own beside the section's, as wikiskill.yaml writes them, so a
        copy validated from a dump keeps them."""
        return {**handler(self), **self._own}

    def with_own(self, values: Mapping[str, object]) -> GateSettings:
        """A copy whose policy's settings of its own are `values`."""
        copy = self.model_copy()
        copy._own = dict(values)
        return copy

    @model_validator(mode="wrap")
    @classmethod
    def _policy_settings(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> GateSettings:
        """Keys the section does not hold that the chosen policy's `Settings` declares are its
        settings of its own, checked by that model; any other unknown key fails as usual."""
        if not isinstance(data, dict) or all(key in cls.model_fields for key in data):
            return handler(data)  # type: ignore[no-any-return]
        try:
            found = policy_class(GATE_POLICY.check(data.get("policy", GATE_POLICY.default)))
        except ValueError:
            found = None
        model = getattr(found, "Settings", None)
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return handler(data)  # type: ignore[no-any-return]
        own = {key: value for key, value in data.items() if key in model.model_fields and key not in cls.model_fields}
        settings: GateSettings = handler({key: value for key, value in data.items() if key not in own})
        model.model_validate(own)
        settings._own = own
        return settings

    @field_validator("policy", mode="before")
    @classmethod
    def _named_policy(cls, value: object) -> str:
        return GATE_POLICY.check(value)

    @model_validator(mode="after")
    def _budget_needs_a_level(self) -> GateSettings:
        if self.alpha_budget is not None and not _has_level(self.policy):
            levelled = ", ".join(name for name in GATE_POLICY.builtins if _has_level(name))
            raise ValueError(
                f"gate.alpha_budget needs a policy with a confidence level ({levelled}), not {self.policy}"
            )
        return self
