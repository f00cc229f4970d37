"""The shipped python-bugfix suite, its tasks, their known-good fixes (kept outside the suite, in
tests/fixtures/python_bugfix_solutions/, so no agent ever sees them) and the suite's own check."""

from pathlib import Path

from wikiskill.benchmarks import BenchmarkKind, Task
from wikiskill.benchmarks.task_folders import TaskFolders
from wikiskill.core.resources import data_dir
from wikiskill.run.scorers import CommandScorer
from wikiskill.store.traces import Trajectory

SUITE = data_dir("benchmarks") / "python-bugfix"
SOLUTIONS = Path(__file__).parent / "fixtures" / "python_bugfix_solutions"
TASKS = sorted(path.parent for path in SUITE.glob("*/*/task.md"))
FOLDERS = TaskFolders(SUITE)
TASK_OF = {task.id: task for split in ("train", "val", "test") for task in FOLDERS.tasks(split)}
SCORER = CommandScorer(FOLDERS.command, FOLDERS.scoring, FOLDERS.directory)


def suite_check(task: Task, workdir: Path) -> float:
    """The suite's own command scorer on `workdir`."""
    return SCORER.score(
        task, Trajectory(task_id=task.id, split=task.split, kind=BenchmarkKind.WORKDIR, question=task.question), workdir
    ).value
