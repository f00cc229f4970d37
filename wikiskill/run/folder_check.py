"""`wikiskill check-suite PATH` for a task-folder suite (`tasks:PATH`): each task's reference is
scored by the suite's own scorer, as a run scores it. A workdir task that carries a `solution/`
is scored twice in fresh working directories: with the solution laid over its files (must score
1) and its files untouched (must score 0). A QA task's `answer` must score 1 and no answer 0. A
judged suite needs a model and is not checked here.

The same two runs are the evidence for the crash rule of a command check (`CrashRule`): what a
crash in the check's own code on the agent's work is. A check that scores the reference 1 is
sound, so a crash of it is its verdict on the work: the task's failure. Without a reference, a
check that crashes on the untouched files too says "wrong" by crashing: the same rule. Otherwise a
crash stays an infrastructure failure. suite.yaml's `crash:` settles it for every task. A check
that crashes on its own reference makes the task unsound (unless the suite rules crashes infra)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..benchmarks import Task
from ..benchmarks.base import BenchmarkKind
from ..benchmarks.task_folders import CrashRule, TaskFolders
from ..contracts.roles import Scorer
from ..core.errors import BenchmarkError, InfrastructureError
from ..store.traces import Trajectory
from .scorers import CheckCrashed, ScorerTimeout, build_scorer
from .suite_check import TaskCheck

REFERENCE_SCORES_ONE = "its reference solution scores 1, so a crash is its verdict on the work"
REFERENCE_CRASHES = "it crashes on its own reference solution"
REFERENCE_FAILS = "its reference solution does not score 1"
UNTOUCHED_CRASH = "no reference solution; it crashes on the untouched files too, so a crash is how it says wrong"
UNTOUCHED_NO_CRASH = "no reference solution, and the untouched files do not crash it"


def check_folders(suite: TaskFolders) -> list[TaskCheck]:
    """The verdict of every task of every split (`reference=False` for those without one)."""
    if suite.scoring.judged:
        raise BenchmarkError(f"{suite.directory}: a judged suite's references need a model; check-suite does not judge")
    if suite.scoring.qa:
        return [
            TaskCheck(task.id, suite.score(task, task.answer), suite.score(task, None)) for task in suite.all_tasks()
        ]
    scorer = raw_scorer(suite)
    return [check_workdir(suite, scorer, task) for task in suite.all_tasks()]


def raw_scorer(suite: TaskFolders) -> Scorer:
    """The suite's scorer as it is, a crash of its check raised as `CheckCrashed`."""
    return build_scorer(suite, _no_judge)


def check_workdir(suite: TaskFolders, scorer: Scorer, task: Task) -> TaskCheck:
    """A workdir task's reference (if any) and untouched files scored, and its crash rule."""
    setting = suite.scoring.crash
    said = f"suite.yaml says crash: {setting}"
    solution = suite.solution(task)
    if solution is None:
        if setting is not None:
            return TaskCheck(task.id, reference=False, crash=setting, crash_reason=said)
        try:
            _score(scorer, task, None)
        except CheckCrashed:
            return TaskCheck(task.id, reference=False, crash=CrashRule.FAILURE, crash_reason=UNTOUCHED_CRASH)
        except (InfrastructureError, ScorerTimeout) as exc:
            return TaskCheck(task.id, problem=f"with the untouched files: {exc}", reference=False, settled=False)
        return TaskCheck(task.id, reference=False, crash=CrashRule.INFRA, crash_reason=UNTOUCHED_NO_CRASH)
    try:
        oracle = _score(scorer, task, solution)
    except CheckCrashed as exc:
        if setting is CrashRule.INFRA:  # the suite rules every crash infra: this one decides nothing
            problem = f"with the solution files: {exc}"
            return TaskCheck(task.id, problem=problem, crash=setting, crash_reason=said, settled=False)
        rule, why = (setting, said) if setting is not None else (CrashRule.INFRA, REFERENCE_CRASHES)
        return TaskCheck(task.id, 0.0, problem=f"{REFERENCE_CRASHES}: {exc}", crash=rule, crash_reason=why)
    except (InfrastructureError, ScorerTimeout) as exc:
        return TaskCheck(task.id, problem=f"with the solution files: {exc}", settled=False)
    rule, why = (CrashRule.FAILURE, REFERENCE_SCORES_ONE) if oracle == 1.0 else (CrashRule.INFRA, REFERENCE_FAILS)
    if setting is not None:
        rule, why = setting, said
    try:
        nop = _score(scorer, task, None)
    except (InfrastructureError, ScorerTimeout) as exc:
        if not isinstance(exc, CheckCrashed) or rule is not CrashRule.FAILURE:
            problem = f"with the untouched files: {exc}"
            if oracle != 1.0:  # unsound whatever the untouched files do
                problem = f"the reference must score 1; it scored {oracle:g}, and {problem}"
            return TaskCheck(task.id, oracle, problem=problem, crash=rule, crash_reason=why, settled=oracle != 1.0)
        nop = 0.0
    return TaskCheck(task.id, oracle, nop, crash=rule, crash_reason=why)


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
