"""Whose crash it is: a task-folder check that crashes in its own code on the agent's work
(`CheckCrashed`) is ruled by evidence about that check (`folder_check.check_workdir`): the task's
failure, scored 0 with the end of the check's output as feedback, when the check scores the task's
reference 1 or, without one, crashes on the untouched files too; otherwise an infrastructure
failure. suite.yaml's `crash:` rules a whole suite. The evidence is gathered once per task digest
and kept beside the Harbor verdicts (`soundness.json`); `evolve` gathers it for every task with a
reference before a round and leaves the unsound ones out of every split."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from ..benchmarks import ReferenceSuite, Task
from ..benchmarks.harbor import ContainerSuite
from ..benchmarks.task_folders import CrashRule, TaskFolders
from ..contracts.roles import Scorer
from ..store.traces import Score, Trajectory
from .folder_check import check_workdir, raw_scorer
from .harbor_tasks import ContainerSetup
from .scorers import CheckCrashed
from .soundness import Verdict, Verdicts, unsound_tasks
from .suite_check import TaskCheck


class CrashRules:
    """Each task's crash rule: the suite's setting, else its kept verdict, else checked now."""

    def __init__(self, suite: TaskFolders, state_dir: Path, scorer: Scorer | None = None):
        self.suite = suite
        self.scorer = scorer or raw_scorer(suite)
        self.verdicts = Verdicts(state_dir)
        self._lock = threading.Lock()

    def verdict(self, task: Task) -> Verdict | None:
        """The task's kept verdict, checked now when there is none; None when the machinery failed."""
        digest = self.suite.task_digest(task)
        with self._lock:
            known = self.verdicts.get(digest)
        if known is not None:
            return known
        check = check_workdir(self.suite, self.scorer, task)
        if not check.settled:
            return None
        verdict = _verdict(check)
        with self._lock:
            try:
                self.verdicts.put(digest, verdict)
            except OSError:  # another process wrote it at the same moment: it is checked again next time
                pass
        return verdict

    def rule(self, task: Task) -> tuple[CrashRule, str]:
        setting = self.suite.scoring.crash
        if setting is not None:
            return setting, f"suite.yaml says crash: {setting}"
        verdict = self.verdict(task)
        if verdict is None or verdict.crash is None:
            return CrashRule.INFRA, "the check could not be run on the task's reference or untouched files"
        return verdict.crash, verdict.crash_reason


def _verdict(check: TaskCheck) -> Verdict:
    return Verdict(check.sound, check.reason, check.crash, check.crash_reason)


class RuledScorer:
    """The suite's scorer, a crash of its check ruled per task (`CrashRules`)."""

    def __init__(self, inner: Scorer, rules: CrashRules):
        self.inner = inner
        self.rules = rules

    def score(self, task: Task, trajectory: Trajectory, workdir: Path) -> Score:
        try:
            return self.inner.score(task, trajectory, workdir)
        except CheckCrashed as crash:
            rule, why = self.rules.rule(task)
            if rule is CrashRule.FAILURE:
                return Score(value=0.0, feedback=crash.feedback)
            raise CheckCrashed(f"{crash} (ruled infra: {why})", crash.feedback) from None


def unsound_folder_tasks(suite: TaskFolders, state_dir: Path) -> dict[str, str]:
    """Each task of the suite that carries solution/ whose check does not score it 1 (a crash on it
    included) or scores its untouched files above 0, with the reason; kept by task digest."""
    rules = CrashRules(suite, state_dir)
    unsound = {}
    for task in suite.all_tasks():
        if suite.solution(task) is None:
            continue
        verdict = rules.verdict(task)
        if verdict is not None and not verdict.sound:
            unsound[task.id] = verdict.reason
    return unsound


def unsound_references(
    suite: ReferenceSuite, containers: Callable[[], ContainerSetup], state_dir: Path, concurrency: int
) -> dict[str, str]:
    """The unsound tasks of a suite whose tasks carry references: a suite of containers' played in
    containers (`soundness.py`), a task-folder suite's by its check here; a suite of another kind
    has none that is checked here."""
    if isinstance(suite, ContainerSuite):
        return unsound_tasks(suite, containers(), state_dir, concurrency)
    if isinstance(suite, TaskFolders):
        return unsound_folder_tasks(suite, state_dir)
    return {}
