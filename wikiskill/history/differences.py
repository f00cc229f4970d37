"""How `uplift`, `compare` and the report say a difference: one sign convention and one plain
verdict line.

A difference is always *what is asked about minus what it is compared with*, so a positive one
means the first is better:

- an uplift arm: its mean minus `none`'s (positive: it beats no skills);
- a skill's contribution (uplift's leave-one-out): main's mean minus the mean of main without
  the skill (positive: the skill helps, and leaving it out would lose that much);
- `compare A B`: B's mean minus A's.

The CLI's tables, the report's table and its forest plot all take their rows from
`uplift_differences`, so none of them can show another sign.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from enum import StrEnum

from ..store.trailers import Action
from ..store.uplift_record import UpliftResult
from ..store.workspace import Workspace
from .rollback import accepted_merges


class Kind(StrEnum):
    ARM = "arm"
    SKILL = "skill"


@dataclass(frozen=True)
class Difference:
    kind: Kind
    name: str
    """The arm, or the skill."""
    subject: str
    """What is asked about, in words: `main`, `main with spell-letters`."""
    baseline: str
    """What it is compared with: `no skills`, `main without it`."""
    value: float
    """`subject`'s mean minus `baseline`'s."""
    interval: tuple[float, float]
    level: float = 0.95
    retire: bool = False
    """A skill of main whose contribution is not shown above 0: a candidate to retire."""

    @property
    def shown(self) -> bool:
        """The interval excludes 0: a difference is shown, one way or the other."""
        return self.interval[0] > 0 or self.interval[1] < 0

    def verdict(self) -> str:
        return verdict(self.subject, self.baseline, self.value, self.interval, self.level)


def signed(value: float) -> str:
    return f"{value:+.3f}"


def interval_text(interval: tuple[float, float]) -> str:
    return f"[{signed(interval[0])}, {signed(interval[1])}]"


def verdict(subject: str, baseline: str, value: float, interval: tuple[float, float], level: float = 0.95) -> str:
    """One plain line: who beats whom by how much, and whether the interval excludes 0, e.g.
    `main beats no skills by 0.081; the 95% interval [+0.062, +0.099] excludes 0`."""
    if value > 0:
        said = f"{subject} beats {baseline} by {value:.3f}"
    elif value < 0:
        said = f"{baseline} beats {subject} by {-value:.3f}"
    else:
        said = f"{subject} and {baseline} score the same"
    low, high = interval
    excludes = low > 0 or high < 0
    return f"{said}; the {level:.0%} interval {interval_text(interval)} " + (
        "excludes 0" if excludes else "includes 0: no difference shown"
    )


def uplift_differences(result: UpliftResult) -> list[Difference]:
    """Each arm's difference from `none`, then each of main's skills' contribution."""
    rows = [
        Difference(Kind.ARM, arm.arm, arm.arm, "no skills", arm.delta, arm.delta_ci95)
        for arm in result.arms
        if arm.arm != "none"
    ]
    rows += [
        Difference(
            Kind.SKILL,
            value.skill,
            f"main with {value.skill}",
            "main without it",
            value.marginal,
            value.ci95,
            retire=value.retire,
        )
        for value in result.per_skill
    ]
    return rows


def retire_command(ws: Workspace, skill: str, program: str = "wikiskill") -> str:
    """The command that takes `skill` off main: `program rollback` where an accepted round created
    it (`program` as the user runs wikiskill), or removing its folder in a commit of your own where
    it came by hand (which `rollback` cannot undo)."""
    root = shlex.quote(str(ws.root))
    changes = [merge for merge in accepted_merges(ws) if merge.meta.skill == skill]
    if changes and changes[-1].meta.action == Action.CREATE:  # its oldest active change made it
        return f"{program} -C {root} rollback {shlex.quote(skill)}"
    folder = shlex.quote(f"skills/{skill}")
    return f'git -C {root} rm -r -q {folder} && git -C {root} commit -q -m "Retire {skill}: uplift shows no value"'


def uplift_caveat(result: UpliftResult) -> str:
    """Why uplift's numbers can differ from the gate's and from `compare`'s."""
    return (
        f"These are uplift's numbers: {result.tasks} {result.split} task(s) x {result.trials} trial(s), "
        "every arm on the same tasks, 95% intervals by a nested bootstrap (tasks, then trials). "
        "The gate judged each proposal on val, against the main of its round, with gate.repeats and its "
        "own test (gate.policy), and `compare` uses a BCa bootstrap of per-task differences: other tasks, "
        "split, repeats or interval method can give other numbers."
    )


def compare_caveat(split: str, tasks: int, repeats: int, policy: str) -> str:
    """Why `compare`'s numbers can differ from the gate's and from uplift's."""
    return (
        f"These are compare's numbers: all {tasks} {split} task(s), gate.repeats {repeats}, a BCa bootstrap of "
        f"per-task differences. The gate judged each proposal against the main of its round under "
        f"gate.policy {policy} (a sequential gate stops on part of val), and `uplift` uses the test split "
        "with a nested bootstrap: other tasks, split, repeats or interval method can give other numbers."
    )
