"""`check-suite` on a task-folder suite: a task's solution/ laid over its files must score 1 and
its files untouched 0, by the suite's own check run for real; a solution that does not fix the
task is unsound, a task without one is listed as unchecked, a QA task's answer is its reference;
and a named suite is checked by its known-good policy (a QA task's answer, a game's walkthrough)."""

import shutil
from pathlib import Path

from typer.testing import CliRunner

from python_bugfix import SOLUTIONS, SUITE
from wikiskill import api
from wikiskill.cli import app

TASKS = {"train": "clock-zero-pad", "val": "binary-search-last-item", "test": "truncate-ellipsis"}


def bugfix_suite(root: Path) -> Path:
    """Three python-bugfix tasks, one a split, each with its known-good fix as solution/."""
    suite = root / "suite"
    suite.mkdir()
    shutil.copy(SUITE / "suite.yaml", suite)
    for split, task_id in TASKS.items():
        shipped = next(SUITE.glob(f"*/{task_id}"))
        shutil.copytree(shipped, suite / split / task_id)
        shutil.copytree(SOLUTIONS / task_id, suite / split / task_id / "solution")
    return suite


def test_each_tasks_solution_scores_one_and_its_untouched_files_zero(tmp_path):
    checks = api.check_suite(f"tasks:{bugfix_suite(tmp_path)}")
    assert [(check.task_id, check.oracle, check.nop, check.sound) for check in checks] == [
        (task_id, 1.0, 0.0, True) for task_id in sorted(TASKS.values())
    ]


def test_a_solution_that_fixes_nothing_is_unsound_and_a_task_without_one_unchecked(tmp_path):
    suite = bugfix_suite(tmp_path)
    val = suite / "val" / TASKS["val"]
    shutil.rmtree(val / "solution")
    shutil.copytree(val / "files", val / "solution")  # the bug itself, "fixed" as shipped
    shutil.rmtree(suite / "test" / TASKS["test"] / "solution")
    result = CliRunner().invoke(app, ["check-suite", str(suite)], env={"COLUMNS": "60"})
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert f"{TASKS['val']}: the reference must score 1 and doing nothing 0; they scored 0 and 0" in lines
    assert f"1 task(s) carry no reference solution and were not checked: {TASKS['test']}" in lines
    assert "1 of 2 tasks sound." in lines


def test_a_qa_task_folder_suite_checks_each_answer_against_itself(tmp_path):
    suite = tmp_path / "qa"
    (suite).mkdir()
    (suite / "suite.yaml").write_text("scorer: exact\n")
    for split in ("train", "val", "test"):
        task = suite / split / f"{split}-1"
        task.mkdir(parents=True)
        (task / "task.md").write_text("What is the capital of France?\n")
        (task / "answer").write_text("Paris\n")
    checks = api.check_suite(suite)
    assert [(check.oracle, check.nop, check.sound) for check in checks] == [(1.0, 0.0, True)] * 3


def test_a_named_suite_is_checked_by_its_known_good_policy_against_doing_nothing():
    checks = api.check_suite("example-qa")
    assert checks and all(check.sound and (check.oracle, check.nop) == (1.0, 0.0) for check in checks)
    assert {check.task_id.partition("/")[0] for check in checks} == {"train", "val", "test"}
