"""`wikiskill check-suite PATH` for a task-folder suite (`tasks:PATH`): each task's reference is
scored by the suite's own scorer, as a run scores it. A workdir task that carries a `solution/`
is scored twice in fresh working directories: its files untouched (must score 0) and with the
solution laid over them (must score 1). A QA task's `answer` must score 1 and no answer 0. A
check that crashes is reported with its reason, never as a score. A judged suite needs a model
and is not checked here."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..benchmarks import Task
from ..benchmarks.base import SPLITS, BenchmarkKind
from ..benchmarks.task_folders import TaskFolders
from ..contracts.roles import Scorer
from ..core.errors import BenchmarkError, InfrastructureError
from ..store.traces import Trajectory
from .scorers import ScorerTimeout, build_scorer
from .suite_check import TaskCheck


def check_folders(suite: TaskFolders) -> tuple[list[TaskCheck], list[str]]:
    """The verdict of each task with a reference, and the ids of those without one."""
    if suite.scoring.judged:
        raise BenchmarkError(f"{suite.directory}: a judged suite's references need a model; check-suite does not judge")
    checks, unchecked = [], []
    scorer = None if suite.scoring.qa else build_scorer(suite, lambda: _no_judge())
    for split in SPLITS:
        for task in suite.tasks(split):
            if scorer is None:
                checks.append(TaskCheck(task.id, suite.score(task, task.answer), suite.score(task, None)))
                continue
            solution = suite.solution(task)
            if solution is None:
                unchecked.append(task.id)
                continue
            checks.append(_check_workdir(scorer, task, solution))
    return checks, unchecked


def _check_workdir(scorer: Scorer, task: Task, solution: Path) -> TaskCheck:
    scores: dict[str, float] = {}
    for name, overlay in (("solution", solution), ("untouched", None)):
        try:
            scores[name] = _score(scorer, task, overlay)
        except (InfrastructureError, ScorerTimeout) as exc:
            return TaskCheck(task.id, scores.get("solution"), None, f"with the {name} files: {exc}")
    return TaskCheck(task.id, scores["solution"], scores["untouched"])


def _score(scorer: Scorer, task: Task, overlay: Path | None) -> float:
    with tempfile.TemporaryDirectory(prefix="wikiskill-check-") as scratch:
        workdir = Path(scratch) / "work"
        if task.files is not None:
            shutil.copytree(task.files, workdir, symlinks=True)
        if overlay is not None:
            shutil.copytree(overlay, workdir, symlinks=True, dirs_exist_ok=True)
        workdir.mkdir(exist_ok=True)
        trajectory = Trajectory(task_id=task.id, split=task.split, kind=BenchmarkKind.WORKDIR, question=task.question)
        return scorer.score(task, trajectory, workdir).value


def _no_judge() -> Scorer:
    raise AssertionError("a judged suite is refused before any scorer is built")
