"""What `wikiskill uplift` recorded: uplift.json on the `uplift/results` branch, with each arm's
mean and difference from no skills and each of main's skills' leave-one-out value. The report
reads it; the proposer is shown the skills it found of no value as candidates to retire."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from .reads import WorkspaceReads
from .trailers import SkillLoading
from .workspace import MAIN

RESULTS_BRANCH = "uplift/results"
RESULTS_FILE = "uplift.json"
RARELY = 0.5
"""A skill loaded on fewer than this share of the runs on the tasks it is for is loaded too
rarely: the proposer is shown its trigger figures and may rewrite its description."""


@dataclass(frozen=True)
class ArmResult:
    arm: str
    mean: float
    ci95: tuple[float, float]
    delta: float
    """Mean minus `none`'s, on the same tasks."""
    delta_ci95: tuple[float, float]
    pass_at_1: float | None
    pass_hat_k: float | None
    tokens_per_task: float
    cost_per_task: float
    skills: list[str]


@dataclass(frozen=True)
class SkillValue:
    skill: str
    marginal: float
    """Its contribution: main's mean minus the mean of main without this skill; positive, the
    skill helps (every view shows this sign, see `history.differences`)."""
    ci95: tuple[float, float]
    tokens: int
    """Tokens of the skill's SKILL.md."""
    retire: bool
    """Its interval reaches 0 from above or lies below it: no value shown (a retire candidate)."""
    loads: int | None = None
    """A CLI agent's runs with main's skills that loaded it (None: the agent is given every skill
    in its prompt, nothing to count)."""
    never_loaded: bool = False
    """A CLI agent never loaded it: its value is nothing but the tokens of its description."""
    loading: SkillLoading = SkillLoading.UNSEEN
    """How the agent comes to it: `on_demand` has the trigger rates below; `always` is loaded on
    every task (it is in the prompt); `unseen`, nothing recorded."""
    tasks_for: list[str] = field(default_factory=list)
    """The tasks it is for: those where leaving it out changed the score, and those its PURPOSE.md
    names (the proposer's evidence)."""
    rate_for: float | None = None
    """`on_demand`: the share of main's runs on `tasks_for` that loaded it (None: no such task)."""
    rate_other: float | None = None
    """`on_demand`: the share on the other tasks, the negative control (None: no other task)."""

    @property
    def rarely_loaded(self) -> bool:
        """Loaded on demand on fewer than `RARELY` of the runs on the tasks it is for."""
        return self.loading is SkillLoading.ON_DEMAND and self.rate_for is not None and self.rate_for < RARELY

    def trigger_text(self) -> str:
        """Its trigger figures in words: `always loaded`, or the two rates."""
        if self.loading is SkillLoading.ALWAYS:
            return "always loaded"
        if self.loading is not SkillLoading.ON_DEMAND:
            return "loads not recorded"
        other = "" if self.rate_other is None else f"{self.rate_other:.0%} on the others"
        if self.rate_for is None:
            return f"no task it is for; loaded {other}" if other else f"loaded in {self.loads or 0} run(s)"
        mine = f"loaded {self.rate_for:.0%} on the {len(self.tasks_for)} task(s) it is for"
        return f"{mine}, {other}" if other else mine


@dataclass(frozen=True)
class UpliftResult:
    split: str
    trials: int
    tasks: int
    arms: list[ArmResult]
    per_skill: list[SkillValue] = field(default_factory=list)
    test_look: int | None = None
    """The look at test this was (`test-looks`), None for another split."""
    not_made: dict[str, str] = field(default_factory=dict)
    """Arms asked for, or left out of the default ones, that were not scored: `{arm: why}`."""

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> UpliftResult:
        data = json.loads(text)
        arms = [
            ArmResult(**{**arm, "ci95": tuple(arm["ci95"]), "delta_ci95": tuple(arm["delta_ci95"])})
            for arm in data["arms"]
        ]
        skills = [
            SkillValue(
                **{
                    **value,
                    "ci95": tuple(value["ci95"]),
                    "loading": _loading(value),
                }
            )
            for value in data["per_skill"]
        ]
        return cls(
            data["split"], data["trials"], data["tasks"], arms, skills, data.get("test_look"), data.get("not_made", {})
        )


def _loading(value: dict[str, object]) -> SkillLoading:
    """A skill value's `loading`; one recorded before it was, read from whether loads were counted."""
    recorded = value.get("loading")
    if isinstance(recorded, str):
        return SkillLoading(recorded)
    return SkillLoading.ON_DEMAND if value.get("loads") is not None else SkillLoading.UNSEEN


def recorded_uplift(ws: WorkspaceReads) -> UpliftResult | None:
    """The last uplift recorded, if any."""
    text = ws.read_file(RESULTS_BRANCH, RESULTS_FILE) if ws.head(RESULTS_BRANCH) else None
    return UpliftResult.from_json(text) if text else None


def rarely_loaded(ws: WorkspaceReads) -> list[SkillValue]:
    """Main's skills the last uplift found loaded too rarely on the tasks they are for."""
    found = recorded_uplift(ws)
    present = {path.split("/")[1] for path in ws.list_paths(MAIN, "skills") if path.count("/") >= 2}
    return [value for value in found.per_skill if value.rarely_loaded and value.skill in present] if found else []


def retire_candidates(ws: WorkspaceReads) -> list[str]:
    """Main's skills the last uplift showed no value for, to offer the proposer for retirement."""
    found = recorded_uplift(ws)
    present = {path.split("/")[1] for path in ws.list_paths(MAIN, "skills") if path.count("/") >= 2}
    return [value.skill for value in found.per_skill if value.retire and value.skill in present] if found else []
