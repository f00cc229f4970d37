"""What a gate policy must do (`GatePolicy`; `Looks` for one that validates in batches) and what it
declares of itself (`BasePolicy` gives the defaults), the `ValidationPlan` it hands the steps, and
the values its verdict carries (`Verdict`, `Evidence`, `Look`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from ..core.parts import GATE_POLICY
from ..core.registry import Registry
from ..loop.settings import CostRule, CostUnit, GateSettings
from ..store.evaluations import Evaluation
from ..store.trailers import Crossed, Decision, Trailers


@dataclass(frozen=True)
class Look:
    """One look of a sequential validation: the first `tasks` of a `pool` of validation tasks,
    taken `batch` at a time, and where the gain's statistic stands against the look's boundaries."""

    number: int
    looks: int
    """How many looks the pool allows."""
    tasks: int
    pool: int
    batch: int
    confidence: float
    margin: float
    """The settings (`gate.confidence`, `gate.margin`) the boundaries were built for."""
    statistic: float
    """The standardised gain: the sum of the per-task differences (less the margin) over the
    square root of the sum of their squares."""
    upper: float
    """Accept at or above it."""
    lower: float | None
    """Reject below it (none at the last look, which gives `paired`'s verdict)."""
    crossed: Crossed | None = None
    """What ended the validation here; None: the next batch runs."""

    @property
    def boundary(self) -> float:
        """The boundary crossed (the upper one while it continues)."""
        return self.lower if self.crossed is Crossed.FUTILITY and self.lower is not None else self.upper

    def text(self) -> str:
        where = f"look {self.number} of {self.looks}, {self.tasks} of {self.pool} tasks"
        if self.crossed is Crossed.EFFICACY:
            return f"{where}: z {self.statistic:.3f} >= efficacy bound {self.upper:.3f}"
        if self.crossed is Crossed.FUTILITY:
            return f"{where}: z {self.statistic:.3f} < futility bound {self.boundary:.3f}"
        if self.crossed is Crossed.POOL_END:
            return f"{where}: pool used up (z {self.statistic:.3f}, final bound {self.upper:.3f})"
        return f"{where}: z {self.statistic:.3f} inside [{self.lower or 0:.3f}, {self.upper:.3f}), continue"


@dataclass(frozen=True)
class CostCheck:
    """`gate.cost`: the candidate's per-task cost against main's on the tasks both recorded one
    for, tested as "the candidate's mean cost is below `limit` times main's" (`tiebreak`: 1 -
    `cost_margin`; `bound`: 1 + `max_cost_increase`)."""

    rule: CostRule
    unit: CostUnit
    n: int
    """Tasks scored, and costed, on both sides."""
    candidate: float
    incumbent: float
    """Mean per-task cost of each side."""
    limit: float
    p_value: float
    """One-sided sign-flip test of "mean(candidate - limit * main) >= 0"."""
    confidence: float
    passed: bool
    """The cost was shown below `limit` times main's at `confidence`."""
    floor: float | None = None
    """`tiebreak`: the one-sided lower bound of the score gain (its non-inferiority test);
    None for a policy without a confidence level, which needs equal means."""
    noninferiority: float = 0.0
    decided: bool = False
    """The cost turned the policy's verdict: a tie accepted as cheaper, a gain rejected as too costly."""

    @property
    def ratio(self) -> float:
        """The candidate's mean cost over main's (1 when both are 0)."""
        if self.incumbent:
            return self.candidate / self.incumbent
        return 1.0 if not self.candidate else math.inf

    @property
    def change(self) -> float:
        """The mean per-task cost difference, candidate minus main."""
        return self.candidate - self.incumbent

    def text(self, against: str = "main") -> str:
        unit = "USD" if self.unit is CostUnit.USD else "tokens"
        if not self.candidate and not self.incumbent:
            return (
                f"no {unit} spent on either side on {self.n} task(s) (a model without calls or "
                f"prices, such as offline): cost cannot tell them apart"
            )
        shown = "shown" if self.passed else "not shown"
        return (
            f"{unit} per task {self.candidate:.6g} vs {against} {self.incumbent:.6g} on {self.n} task(s), "
            f"ratio {self.ratio:.3f}: {shown} below {self.limit:.3f} at {self.confidence:g} "
            f"(sign-flip p={self.p_value:.4f})"
        )


@dataclass(frozen=True)
class Effect:
    """What a change did to the val tasks, task by task: the one evidence the gate's commit,
    skill-impact.md, PURPOSE.md, `show` and `review` all state, in one wording."""

    helped: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    hurt: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)

    def text(self) -> str:
        return (
            f"helped {len(self.helped)} val task(s) ({len(self.fixed)} newly solved), "
            f"hurt {len(self.hurt)} ({len(self.broken)} no longer solved)"
        )


@dataclass(frozen=True)
class Evidence:
    """What a verdict rests on; written to the gate commit and the skill-impact entry."""

    policy: str
    n: int
    candidate: float
    incumbent: float
    gain: Fraction
    """The exact mean per-task difference, candidate minus incumbent."""
    fixed: list[str] = field(default_factory=list)
    """Tasks the candidate solves that the incumbent did not."""
    broken: list[str] = field(default_factory=list)
    """Tasks the incumbent solved that the candidate does not."""
    helped: list[str] = field(default_factory=list)
    """Tasks the candidate scores higher on (the `fixed` ones among them)."""
    hurt: list[str] = field(default_factory=list)
    """Tasks the candidate scores lower on (the `broken` ones among them)."""
    interval: tuple[float, float] | None = None
    """One-sided confidence interval of the mean per-task difference (upper end +inf)."""
    confidence: float | None = None
    p_value: float | None = None
    look: Look | None = None
    """`sequential`: the look that ended the validation and the boundary it crossed."""
    left_out: dict[str, str] = field(default_factory=dict)
    """Tasks left out on both sides because the machinery failed on one, with the reason."""
    cost: CostCheck | None = None
    """`gate.cost` other than `ignore`: the cost test and what it decided."""

    @property
    def mean_diff(self) -> float:
        return float(self.gain)

    @property
    def task_effect(self) -> Effect:
        return Effect(self.helped, self.fixed, self.hurt, self.broken)

    def effect(self) -> str:
        """What the change did to the val tasks, in the one wording every view shares."""
        return self.task_effect.text()

    def interval_text(self) -> str | None:
        if self.interval is None:
            return None
        return f"[{self.interval[0]:+.4f}, +inf) at {self.confidence:g}"


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    """`ACCEPTED` or `REJECTED`."""
    reason: str
    """One line for the gate commit and `wikiskill show`."""
    evidence: Evidence


@runtime_checkable
class Looks(Protocol):
    """Validation in batches that may stop before the val split's end (`sequential`): the
    validate step runs `batch` more tasks of both candidate and incumbent, records the look, and
    asks `look` whether to stop, until it does; the gate and `audit` replay the looks recorded."""

    batch: int

    def counts(self, pool: int) -> tuple[int, ...]:
        """The tasks used at each look of a pool: `batch`, `2 * batch`, ..., `pool`."""

    def look(self, candidate: Evaluation, incumbent: Evaluation, pool: int, at_least: bool = False) -> Look:
        """Where the tasks so far (the first of the pool, in its order, at one of its looks)
        stand; `crossed` says whether the validation stops here. A pure function of the per-task
        differences and the look, so `audit` recomputes it."""

    def judge_looks(self, candidate: Evaluation, incumbent: Evaluation, pool: int, at_least: bool = False) -> Verdict:
        """Replay every look on the tasks given, in order: the verdict of the first that stops
        (the validate step never runs past it); at the pool's end, `paired`'s."""


@dataclass(frozen=True)
class ValidationPlan:
    """How a policy wants its candidate validated; the steps and `audit` follow it and never ask
    which policy they hold."""

    looks: Looks | None = None
    """Batched looks that may stop early; None: one evaluation of every val task."""
    confirms: bool = False
    """A candidate that passes is evaluated once more, with fresh seeds, and must pass again."""


class GatePolicy(Protocol):
    """How much evidence a candidate's validation must show to be merged (config `gate.policy`;
    `loop/gate_policies.py`). Both evaluations cover the same tasks under the same setup and
    differ in the skills alone.

    A policy declares what it is, so no code outside it asks for its name: whether it tests at a
    confidence level (`has_level`), its settings of its own (`Settings`), the trailers it records
    them in (`trailers`), how `audit` rebuilds it from a commit (`recorded_settings`) and what
    keeps a tie from being no worse (`tie_problem`). A class without these takes `BasePolicy`'s."""

    name: ClassVar[str]
    """Recorded as the gate commit's `policy` trailer."""
    has_level: ClassVar[bool]
    """It tests at a confidence level (`gate.confidence`), which `gate.alpha_budget` and
    `gate.cost: tiebreak` set; one without compares means, and refuses a budget."""
    Settings: ClassVar[type[BaseModel]]
    """Its settings of its own, beyond the `gate` section's: each field is a `gate.<field>`
    setting of wikiskill.yaml, accepted there only while this policy is chosen, and read back
    with `GateSettings.own(Settings)`."""

    @classmethod
    def from_settings(cls, settings: GateSettings) -> GatePolicy:
        """The policy configured by the `gate` section (`confidence`, `margin`, `max_broken`, `seed`,
        and its settings of its own)."""

    @classmethod
    def recorded_settings(cls, recorded: Trailers, settings: GateSettings) -> GateSettings:
        """The settings a commit's trailers record it ran under, over the workspace's `settings`:
        `audit` rebuilds the policy from them (`from_settings`) to replay its verdict."""

    def plan(self) -> ValidationPlan:
        """How the candidate is validated: in one look or in batches, and whether it is confirmed."""

    def judge(self, candidate: Evaluation, incumbent: Evaluation, at_least: bool = False) -> Verdict:
        """Accept or reject the candidate against the incumbent. `at_least`: a tie passes too
        (a change that only removes prompt text)."""

    def trailers(self) -> dict[str, object]:
        """Its settings of its own, by name, as each look and the gate commit record them
        (`Wikiskill-Policy-<Name>`)."""

    def tie_problem(self, evidence: Evidence) -> str | None:
        """Why a candidate with main's mean score is still worse than main (`gate.cost: tiebreak`
        under a policy without a level); None when it is not."""


class NoSettings(BaseModel):
    """The settings of its own of a policy that has none."""

    model_config = ConfigDict(extra="forbid")


class BasePolicy:
    """What a gate policy declares unless it says otherwise: no confidence level, no settings or
    trailers of its own (`recorded_settings` reads those of one that has them) and a tie that is
    no worse. A policy may subclass it; the registry gives a class that does not these defaults."""

    has_level: ClassVar[bool] = False
    Settings: ClassVar[type[BaseModel]] = NoSettings

    @classmethod
    def recorded_settings(cls, recorded: Trailers, settings: GateSettings) -> GateSettings:
        return settings.with_own(recorded.policy_settings)

    def trailers(self) -> dict[str, object]:
        return {}

    def tie_problem(self, evidence: Evidence) -> str | None:
        return None


GATE_POLICIES = Registry(GATE_POLICY, GatePolicy, defaults=BasePolicy)
