"""Per-task wall time of the command scorer, split into set-up (a fresh workdir with the task's
files copied in), the check (pytest on a small task) and tear-down (the workdir removed).

    python benchmarks/perf/command_scorer.py [--tasks 20] [--files 10] [--no-plugin-autoload]

A `tasks:` suite of N small bug-fix tasks is written to a temporary folder, each with calc.py,
its pytest file (one passing and one failing test) and `--files` extra modules of about 2 KB.
Each task then goes through what `run/workdir_tasks.py` does around the agent, step by step and
timed apart: `shutil.copytree` of its files into a new temporary directory, `CommandScorer.score`
running `python -m pytest -q` there, and the directory's removal. The table gives the median,
the 90th percentile and the mean per task. `--no-plugin-autoload` sets
PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 for the checks: pytest's start-up is most of a check, and the
plugins installed beside it decide much of that.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

from _common import table
from wikiskill.benchmarks.task_folders import TaskFolders
from wikiskill.run.scorers import CommandScorer
from wikiskill.store.traces import Trajectory

BUGGY = "def absolute(x):\n    return x\n"
TESTS = (
    "from calc import absolute\n\n\ndef test_positive():\n    assert absolute(3) == 3\n\n\n"
    "def test_negative():\n    assert absolute(-4) == 4\n"
)


def write_suite(root: Path, tasks: int, extra_files: int) -> Path:
    suite = root / "suite"
    suite.mkdir()
    (suite / "suite.yaml").write_text(
        yaml.safe_dump({"scorer": "command", "command": f"{sys.executable} -m pytest -q -p no:cacheprovider"})
    )
    filler = "".join(f"def helper_{i}(value):\n    return value + {i}\n\n" for i in range(60))
    for split, count in (("train", tasks), ("val", 1), ("test", 1)):
        for index in range(count):
            files = suite / split / f"{split}-{index:03d}" / "files"
            files.mkdir(parents=True)
            (files.parent / "task.md").write_text("Fix absolute() in calc.py.")
            (files / "calc.py").write_text(BUGGY)
            (files / "test_calc.py").write_text(TESTS)
            for extra in range(extra_files):
                (files / f"module_{extra:02d}.py").write_text(filler)
    return suite


def measure(suite: Path) -> list[tuple[float, float, float]]:
    folders = TaskFolders(suite)
    scorer = CommandScorer(folders.command, folders.scoring, folders.directory)
    phases = []
    for task in folders.tasks("train"):
        trajectory = Trajectory(task_id=task.id, split=task.split, kind=folders.spec.kind, question=task.question)
        started = time.perf_counter()
        scratch = tempfile.mkdtemp(prefix="wikiskill-work-")
        workdir = Path(scratch) / "work"
        shutil.copytree(task.files, workdir, symlinks=True)
        copied = time.perf_counter()
        score = scorer.score(task, trajectory, workdir)
        checked = time.perf_counter()
        shutil.rmtree(scratch)
        removed = time.perf_counter()
        assert score.value == 0.0 and "test_negative" in score.feedback, score  # it fails, as written
        phases.append((copied - started, checked - copied, removed - checked))
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--files", type=int, default=10, help="extra files of about 2 KB per task")
    parser.add_argument("--no-plugin-autoload", action="store_true")
    args = parser.parse_args()
    if args.no_plugin_autoload:
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    with tempfile.TemporaryDirectory() as root:
        phases = measure(write_suite(Path(root), args.tasks, args.files))
    rows = []
    for name, index in (("set-up (copy files)", 0), ("check (pytest)", 1), ("tear-down", 2)):
        values = sorted(phase[index] * 1000 for phase in phases)
        rows.append([name, statistics.median(values), values[int(0.9 * (len(values) - 1))], statistics.mean(values)])
    totals = sorted(sum(phase) * 1000 for phase in phases)
    rows.append(["per task", statistics.median(totals), totals[int(0.9 * (len(totals) - 1))], statistics.mean(totals)])
    autoload = "off" if args.no_plugin_autoload else "on"
    print(f"{args.tasks} tasks, {args.files + 2} files each, pytest plugin autoload {autoload}")
    print(table(["phase", "median ms", "p90 ms", "mean ms"], rows))


if __name__ == "__main__":
    main()
