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
from dataclasses import dataclass

from ..core.errors import WikiskillError
from .traces import Trajectory
from .workspace import Commit, Workspace


@dataclass(frozen=True)
class Evaluation:
    """Per-task scores (the mean over repeats) of one set of skills under one setup."""

    fingerprint: str
    setup: str
    skills_id: str
    scores: dict[str, float]

    def __post_init__(self) -> None:
        broken = [task for task, score in self.scores.items() if not math.isfinite(score)]
        if broken:
            raise WikiskillError(f"{len(broken)} task(s) scored no finite number ({broken[0]}: "
                                 f"{self.scores[broken[0]]}); an evaluation needs finite scores: check the "
                                 "benchmark's scoring")

    @property
    def n(self) -> int:
        return len(self.scores)

    @property
    def mean(self) -> float:
        """Correctly rounded (`math.fsum`): the same scores in any task order give the same mean."""
        return math.fsum(self.scores.values()) / len(self.scores) if self.scores else 0.0

    @property
    def solved(self) -> int:
        return sum(score >= 1.0 for score in self.scores.values())


PURPOSE = "PURPOSE.md"
"""A skill's documentation for people (origin, patterns, history): never in any prompt."""


def skills_id(ws: Workspace, ref: str, wiki_access: bool = False) -> str:
    """The id of what the task agent is given at `ref`: every file under skills/ except the
    PURPOSE.md files (the gate records its decision there on a merge, which must not make the
    merged skills differ from the validated ones), and the pattern pages when the agent may read
    the wiki (`agent.wiki_access`)."""
    files = [[path, mode, hashlib.sha1(data).hexdigest()] for path, mode, data in ws.blobs_with_modes(ref, "skills")
             if path.rpartition("/")[2] != PURPOSE]
    wiki = ws.tree_id(ref, "wiki/patterns") if wiki_access else None
    return hashlib.sha256(json.dumps([files, wiki]).encode()).hexdigest()[:24]


def per_task_scores(runs: list[list[Trajectory]]) -> dict[str, float]:
    """Each task's mean score over the repeats, in task order."""
    scores: dict[str, list[float]] = {}
    for run in runs:
        for trajectory in run:
            scores.setdefault(trajectory.task_id, []).append(trajectory.score)
    return {task: sum(values) / len(values) for task, values in scores.items()}


def outcomes_with_repeats(runs: list[list[Trajectory]]) -> str:
    """The per-task outcomes file: the first repeat's outcome of each task with `score` the mean
    over repeats (and every repeat's score under `scores` when there are several)."""
    means = per_task_scores(runs)
    lines = []
    for index, trajectory in enumerate(runs[0]):
        row = trajectory.outcome()
        row["score"] = round(means[trajectory.task_id], 6)
        row["success"] = means[trajectory.task_id] >= 1.0
        if len(runs) > 1:
            row["scores"] = [round(run[index].score, 6) for run in runs]
        lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    return "".join(lines)


def read_scores(text: str) -> dict[str, float]:
    """`{task id: score}` of a per-task outcomes file; lines that do not parse are skipped."""
    scores = {}
    for line in text.splitlines():
        try:
            row = json.loads(line)
            scores[str(row["id"])] = float(row["score"])
        except (ValueError, KeyError, TypeError):
            continue
    return scores


def evaluation_at(ws: Workspace, commit: Commit) -> Evaluation | None:
    """The evaluation a commit records, or None when it records none (or its file is gone)."""
    meta = commit.meta
    if not (meta.fingerprint and meta.results and meta.setup and meta.skills_id):
        return None
    text = ws.read_file(commit.sha, meta.results)
    if text is None:
        return None
    return Evaluation(meta.fingerprint, meta.setup, meta.skills_id, read_scores(text))


def find_evaluation(ws: Workspace, ref: str, fingerprint: str) -> tuple[Commit, Evaluation] | None:
    """The newest commit on `ref`'s first-parent line that recorded an evaluation with `fingerprint`."""
    for commit in ws.log(ref):
        if commit.meta.fingerprint == fingerprint:
            evaluation = evaluation_at(ws, commit)
            if evaluation is not None:
                return commit, evaluation
    return None
