"""Was the changed skill loaded during validation? An agent that loads skills on demand (a coding
CLI) may score higher with a candidate without ever reading its skill: the gain then came from
noise or from the description alone, not from the skill's instructions. The gate records how
many validation runs loaded the skill, flags a gain that none did, and with `gate.require_load`
rejects it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..contracts.gate import Verdict
from ..store.evaluations import read_loads
from ..store.trailers import Action, Decision, SkillLoading

LOADABLE = (Action.CREATE, Action.PATCH, Action.DESCRIBE)
"""The actions that leave a skill for the agent to load (a retire leaves none)."""


@dataclass(frozen=True)
class ValidationLoads:
    """How the agent came to the changed skill `skill` during the validation the verdict read."""

    skill: str
    loading: SkillLoading
    loads: int = 0
    """Runs (scored tasks times repeats) whose agent loaded it; counted when `ON_DEMAND`."""
    runs: int = 0

    @property
    def never(self) -> bool:
        """An on-demand agent ran validation and loaded the skill in none of its runs."""
        return self.loading is SkillLoading.ON_DEMAND and self.runs > 0 and self.loads == 0

    def trailers(self, gain: bool) -> dict[str, object]:
        """`Skill-Loading`, the counts where they mean something, and `Never-Loaded` on a gain
        (`gain`: the candidate scored higher) that came without the skill."""
        counted = self.loading is SkillLoading.ON_DEMAND
        return {
            "skill_loading": self.loading,
            "skill_loads": self.loads if counted else None,
            "skill_runs": self.runs if counted else None,
            "never_loaded": True if gain and self.never else None,
        }

    def line(self, gain: bool) -> str | None:
        """The gate commit's line on it; None when there is nothing to count."""
        if self.loading is not SkillLoading.ON_DEMAND or not self.runs:
            return None
        if gain and self.never:
            return (
                f"Never loaded: {self.skill} was loaded in none of {self.runs} validation runs; "
                "the gain did not come from the skill"
            )
        return f"Loaded: {self.skill} in {self.loads} of {self.runs} validation runs"


def validation_loads(
    outcomes: Callable[[], str], action: Action, skill: str, loading: SkillLoading
) -> ValidationLoads | None:
    """The loads of `skill` in the per-task outcomes file of the validation the verdict read,
    which `outcomes` reads only when there are loads to count; None for an action that leaves
    no skill to load."""
    if action not in LOADABLE or not skill:
        return None
    if loading is not SkillLoading.ON_DEMAND:
        return ValidationLoads(skill, loading)
    tasks = read_loads(outcomes()).values()
    return ValidationLoads(
        skill, loading, sum(task.loads.get(skill, 0) for task in tasks), sum(task.runs for task in tasks)
    )


def require_load(verdict: Verdict, loads: ValidationLoads | None, required: bool) -> Verdict:
    """`gate.require_load`: an accepted verdict whose changed skill was never loaded, rejected."""
    if not required or loads is None or not loads.never or verdict.decision != Decision.ACCEPTED:
        return verdict
    reason = f"never loaded: {loads.skill} was loaded in none of {loads.runs} validation runs (gate.require_load)"
    return Verdict(Decision.REJECTED, f"{verdict.reason}; {reason}", verdict.evidence)
