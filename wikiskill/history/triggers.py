"""Trigger rates: how often an agent that loads skills on demand loaded a skill on the tasks it is
for, and on the others (the negative control). A skill is for a task where leaving it out changed
the task's score, or where its PURPOSE.md names the task (the proposer's evidence, kept there
with each change's rationale). A skill the agent rarely loads where it applies earns its value
only through its description, which is what the agent reads to decide."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Triggers:
    tasks_for: list[str]
    rate_for: float | None
    rate_other: float | None


def named_tasks(purpose: str, tasks: Collection[str]) -> set[str]:
    """The tasks among `tasks` a skill's PURPOSE.md names, each as a whole word."""
    return {task for task in tasks if re.search(rf"(?<![\w-]){re.escape(task)}(?![\w-])", purpose)}


def changed_tasks(with_skill: Mapping[str, list[float]], without: Mapping[str, list[float]]) -> set[str]:
    """The tasks whose mean score over the trials differs with the skill and without it."""
    return {
        task
        for task, scores in with_skill.items()
        if task in without and sum(scores) / len(scores) != sum(without[task]) / len(without[task])
    }


def triggers(
    skill: str,
    loads: Mapping[str, Counter[str]],
    runs: Mapping[str, int],
    tasks: list[str],
    tasks_for: set[str],
) -> Triggers:
    """`skill`'s share of runs that loaded it on `tasks_for` and on the rest of `tasks`, from each
    task's runs and the runs that loaded each skill."""

    def rate(group: list[str]) -> float | None:
        total = sum(runs.get(task, 0) for task in group)
        return sum(loads.get(task, Counter())[skill] for task in group) / total if total else None

    chosen = [task for task in tasks if task in tasks_for]
    return Triggers(chosen, rate(chosen), rate([task for task in tasks if task not in tasks_for]))
