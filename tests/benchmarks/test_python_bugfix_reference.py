"""The shipped python-bugfix suite, like every suite's reference test: each task's check (the
suite's own command scorer, running its pytest check for real in a copy of its files) scores 0
on the files as shipped and 1.0 with the task's known-good fix. The fixes live in
tests/fixtures/python_bugfix_solutions/, outside the suite, so no agent ever sees them."""

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from python_bugfix import SOLUTIONS, SUITE, TASK_OF, TASKS, suite_check


def scores(folder: Path, root: Path) -> tuple[float, float]:
    """The check's score on the task's files as shipped, and with its known-good fix copied over."""
    shipped, fixed = root / folder.name / "shipped", root / folder.name / "fixed"
    shutil.copytree(folder / "files", shipped)
    shutil.copytree(folder / "files", fixed)
    shutil.copytree(SOLUTIONS / folder.name, fixed, dirs_exist_ok=True)
    task = TASK_OF[folder.name]
    return suite_check(task, shipped), suite_check(task, fixed)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, tuple[float, float]]:
    root = tmp_path_factory.mktemp("python-bugfix")
    with ThreadPoolExecutor(4) as pool:
        return dict(zip([task.name for task in TASKS], pool.map(lambda task: scores(task, root), TASKS), strict=True))


@pytest.mark.parametrize("task", [task.name for task in TASKS])
def test_doing_nothing_scores_zero_and_the_known_good_fix_scores_one(results, task):
    assert results[task] == (0.0, 1.0)


def test_the_suite_holds_twenty_tasks_split_ten_five_five_each_with_a_report_files_and_tests():
    splits = [task.parent.name for task in TASKS]
    assert (splits.count("train"), splits.count("val"), splits.count("test")) == (10, 5, 5)
    assert len({task.name for task in TASKS}) == 20
    for task in TASKS:
        assert (task / "task.md").read_text().strip()
        assert list((task / "files" / "tests").glob("test_*.py"))


def test_every_task_has_a_fix_and_no_fix_lies_inside_the_suite():
    assert sorted(path.name for path in SOLUTIONS.iterdir()) == sorted(task.name for task in TASKS)
    shipped = {path.read_text() for path in SUITE.rglob("*.py")}
    assert not any(path.read_text() in shipped for path in SOLUTIONS.rglob("*.py"))
