"""Evaluations as the gate sees them: per-task scores under one fingerprint, kept in git.

An evaluation is written once, as a commit that carries its fingerprint (`Fingerprint`,
`Eval-Setup`, `Skills-Id` trailers) and names the per-task outcomes file it was scored from
(`Results`). Finding the incumbent is finding such a commit on main for main's skills and
the current setup; nothing else is trusted.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from dataclasses import dataclass, field

from ..core.errors import WikiskillError
from ..loop.settings import CostUnit
from .reads import WorkspaceReads
from .traces import Trajectory
from .workspace import Commit


@dataclass(frozen=True)
class Evaluation:
    """Per-task scores (the mean over repeats) of one set of skills under one setup."""

    fingerprint: str
    setup: str
    skills_id: str
    scores: dict[str, float]
    """The scored tasks' scores."""
    infra: dict[str, str] = field(default_factory=dict)
    """Tasks left out as infrastructure failures (every repeat failed so), with the reason."""
    tasks: tuple[str, ...] = ()
    """Every task evaluated, scored or not, in the split's order (default: the scored ones,
    then the infra ones)."""
    tokens: dict[str, float] = field(default_factory=dict)
    """The scored tasks' model tokens (the mean over repeats), where recorded."""
    usd: dict[str, float] = field(default_factory=dict)
    """The scored tasks' priced cost in USD (the mean over repeats), where recorded."""

    def __post_init__(self) -> None:
        if not self.tasks:
            object.__setattr__(self, "tasks", (*self.scores, *self.infra))
        broken = [task for task, score in self.scores.items() if not math.isfinite(score)]
        if broken:
            raise WikiskillError(
                f"{len(broken)} task(s) scored no finite number ({broken[0]}: "
                f"{self.scores[broken[0]]}); an evaluation needs finite scores: check the "
                "benchmark's scoring"
            )

    @property
    def n(self) -> int:
        """The scored tasks."""
        return len(self.scores)

    @property
    def size(self) -> int:
        """Every task evaluated, infrastructure failures included."""
        return len(self.tasks)

    def only(self, tasks: list[str]) -> Evaluation:
        """This evaluation on `tasks` alone, in their order."""
        return Evaluation(
            self.fingerprint,
            self.setup,
            self.skills_id,
            {task: self.scores[task] for task in tasks if task in self.scores},
            {task: self.infra[task] for task in tasks if task in self.infra},
            tuple(tasks),
            {task: self.tokens[task] for task in tasks if task in self.tokens},
            {task: self.usd[task] for task in tasks if task in self.usd},
        )

    def costs(self, unit: CostUnit) -> dict[str, float]:
        """Each scored task's cost in `unit`, for the tasks that recorded one."""
        return self.usd if unit is CostUnit.USD else self.tokens

    @property
    def mean(self) -> float:
        """Correctly rounded (`math.fsum`): the same scores in any task order give the same mean."""
        return math.fsum(self.scores.values()) / len(self.scores) if self.scores else 0.0

    @property
    def solved(self) -> int:
        return sum(score >= 1.0 for score in self.scores.values())


PURPOSE = "PURPOSE.md"
"""A skill's documentation for people (origin, patterns, history): never in any prompt."""


def skills_id(ws: WorkspaceReads, ref: str, wiki_access: bool = False) -> str:
    """The id of what the task agent is given at `ref`: every file under skills/ except the
    PURPOSE.md files (the gate records its decision there on a merge, which must not make the
    merged skills differ from the validated ones), and the pattern pages when the agent may read
    the wiki (`agent.wiki_access`)."""
    files = [
        [path, mode, hashlib.sha1(data).hexdigest()]
        for path, mode, data in ws.blobs_with_modes(ref, "skills")
        if path.rpartition("/")[2] != PURPOSE
    ]
    wiki = ws.tree_id(ref, "wiki/patterns") if wiki_access else None
    return hashlib.sha256(json.dumps([files, wiki]).encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Outcomes:
    """A per-task outcomes file read back: the scored tasks, the infra ones, every id in order."""

    scores: dict[str, float]
    infra: dict[str, str]
    tasks: tuple[str, ...]
    tokens: dict[str, float] = field(default_factory=dict)
    usd: dict[str, float] = field(default_factory=dict)

    def evaluation(self, fingerprint: str, setup: str, skills: str) -> Evaluation:
        return Evaluation(fingerprint, setup, skills, self.scores, self.infra, self.tasks, self.tokens, self.usd)


def per_task_outcomes(runs: list[list[Trajectory]]) -> Outcomes:
    """Each task's mean score (and tokens and cost, as the outcomes file rounds them) over the
    repeats that scored it, in task order; a task that every repeat recorded as an infrastructure
    failure has none (its last reason is kept)."""
    scored: dict[str, list[Trajectory]] = {}
    reasons: dict[str, str] = {}
    order: dict[str, None] = {}
    for run in runs:
        for trajectory in run:
            order[trajectory.task_id] = None
            if trajectory.infra:
                reasons[trajectory.task_id] = trajectory.error or "infrastructure failure"
            else:
                scored.setdefault(trajectory.task_id, []).append(trajectory)
    kept = [task for task in order if task in scored]
    means = {task: sum(t.score for t in scored[task]) / len(scored[task]) for task in kept}
    tokens = {task: _mean_usage(scored[task], "tokens") for task in kept}
    usd = {task: _mean_usage(scored[task], "cost") for task in kept}
    return Outcomes(means, {task: reasons[task] for task in order if task not in means}, tuple(order), tokens, usd)


def _mean_usage(trajectories: list[Trajectory], column: str) -> float:
    """The `tokens` or `cost` column of the outcomes file for a task scored by these repeats."""
    values = [t.outcome()[column] for t in trajectories]
    return round(math.fsum(values) / len(values), 8)


def outcomes_with_repeats(runs: list[list[Trajectory]]) -> str:
    """The per-task outcomes file: the first repeat's outcome of each task with `score` the mean
    over the repeats that scored it (and every repeat's score under `scores` when there are
    several); a task no repeat scored keeps a null score and `failure: infra`."""
    means = per_task_outcomes(runs).scores
    lines = []
    for index, trajectory in enumerate(runs[0]):
        row = trajectory.outcome()
        if trajectory.task_id in means:
            row["score"] = round(means[trajectory.task_id], 6)
            row["success"] = means[trajectory.task_id] >= 1.0
            if trajectory.infra:  # a later repeat scored it
                row["failure"] = row["error"] = None
        else:
            row["error"] = next((run[index].error for run in reversed(runs) if run[index].infra), row["error"])
        if len(runs) > 1:
            row["scores"] = [None if run[index].infra else round(run[index].score, 6) for run in runs]
            repeats = [run[index] for run in runs if not run[index].infra]
            if repeats:
                row["tokens"], row["cost"] = _mean_usage(repeats, "tokens"), _mean_usage(repeats, "cost")
            loads = Counter(name for run in repeats for name in dict.fromkeys(run.skills_loaded))
            row.pop("loads", None)
            if loads:
                row["loads"] = dict(sorted(loads.items()))
        lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    return "".join(lines)


def read_outcomes(text: str) -> Outcomes:
    """A per-task outcomes file: a row with `failure: infra` is an infrastructure failure with
    its `error` as the reason; lines that do not parse are skipped, and so is a `tokens` or `cost`
    that is not a finite number (the task then has no cost in that unit)."""
    scores: dict[str, float] = {}
    infra: dict[str, str] = {}
    order: dict[str, None] = {}
    usage: dict[str, dict[str, float]] = {"tokens": {}, "cost": {}}
    for line in text.splitlines():
        try:
            row = json.loads(line)
            task = str(row["id"])
            reason = str(row.get("error") or "infrastructure failure") if row.get("failure") == "infra" else None
            value = float(row["score"]) if reason is None else None
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        order[task] = None
        if value is None:
            infra[task] = reason or ""
            scores.pop(task, None)
        else:
            scores[task] = value
            infra.pop(task, None)
        for column, found in usage.items():
            amount = _finite(row.get(column)) if value is not None else None
            if amount is None:
                found.pop(task, None)
            else:
                found[task] = amount
    return Outcomes(scores, infra, tuple(order), usage["tokens"], usage["cost"])


def _finite(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return None
    return float(value)


@dataclass(frozen=True)
class TaskLoads:
    """One scored task of an outcomes file: its runs, and how many of them loaded each skill."""

    runs: int
    loads: dict[str, int]


def read_loads(text: str) -> dict[str, TaskLoads]:
    """`{task id: TaskLoads}` of the scored tasks of a per-task outcomes file (`loads` rows);
    a count that is not a whole number of runs is read as none."""
    found: dict[str, TaskLoads] = {}
    for line in text.splitlines():
        try:
            row = json.loads(line)
            task, score = str(row["id"]), row["score"]
        except (ValueError, KeyError, TypeError):
            continue
        if score is None or row.get("failure") == "infra":
            continue
        repeats = row.get("scores")
        runs = sum(value is not None for value in repeats) if isinstance(repeats, list) else 1
        loads = row.get("loads") if isinstance(row.get("loads"), dict) else {}
        found[task] = TaskLoads(
            runs,
            {
                str(name): count
                for name, count in loads.items()
                if isinstance(count, int) and not isinstance(count, bool) and 0 < count <= runs
            },
        )
    return found


def read_scores(text: str) -> dict[str, float]:
    """`{task id: score}` of the scored tasks of a per-task outcomes file."""
    return read_outcomes(text).scores


def evaluation_at(ws: WorkspaceReads, commit: Commit) -> Evaluation | None:
    """The evaluation a commit records, or None when it records none (or its file is gone)."""
    meta = commit.meta
    if not (meta.fingerprint and meta.results and meta.setup and meta.skills_id):
        return None
    text = ws.read_file(commit.sha, meta.results)
    if text is None:
        return None
    return read_outcomes(text).evaluation(meta.fingerprint, meta.setup, meta.skills_id)


def find_evaluation(ws: WorkspaceReads, ref: str, fingerprint: str) -> tuple[Commit, Evaluation] | None:
    """The newest commit on `ref`'s first-parent line that recorded an evaluation with `fingerprint`."""
    for commit in ws.log(ref):
        if commit.meta.fingerprint == fingerprint:
            evaluation = evaluation_at(ws, commit)
            if evaluation is not None:
                return commit, evaluation
    return None
