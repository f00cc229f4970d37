"""`check-suite` on a task-folder suite: a task's solution/ laid over its files must score 1 and
its files untouched 0, by the suite's own check run for real; a solution that does not fix the
task is unsound, a task without one is listed as unchecked, a QA task's answer is its reference;
and a named suite is checked by its known-good policy (a QA task's answer, a game's walkthrough)."""

import shutil
from pathlib import Path

from typer.testing import CliRunner

from python_bugfix import SOLUTIONS, SUITE
from taskfolders import encode_suite
from wikiskill import api
from wikiskill.benchmarks.task_folders import CrashRule, TaskFolders
from wikiskill.cli import app
from wikiskill.run.folder_check import check_workdir, raw_scorer
from wikiskill.run.suite_check import TaskCheck

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


ENCODE_SPLITS = {"train": ["bare-t"], "val": ["enc-v"], "test": ["enc-e"]}
CRASH = "AttributeError: 'NoneType' object has no attribute 'strip'"


def checked(suite_dir: Path, task_id: str) -> TaskCheck:
    suite = TaskFolders(suite_dir)
    return check_workdir(suite, raw_scorer(suite), next(task for task in suite.all_tasks() if task.id == task_id))


def test_suite_yaml_s_crash_rules_a_task_without_a_reference_and_nothing_is_run_for_it(tmp_path):
    suite = encode_suite(tmp_path, ENCODE_SPLITS, {"bare-t": None}, crash="failure")
    (suite / "check.py").write_text("#!/bin/sh\nexit 3\n")  # any run of it would say so
    assert checked(suite, "bare-t") == TaskCheck(
        "bare-t", reference=False, crash=CrashRule.FAILURE, crash_reason="suite.yaml says crash: failure"
    )


def test_a_reference_that_crashes_a_suite_ruling_crashes_infra_decides_nothing(tmp_path):
    suite = encode_suite(tmp_path, ENCODE_SPLITS, {"enc-v": "def encode(word):\n    return None\n"}, crash="infra")
    assert checked(suite, "enc-v") == TaskCheck(
        "enc-v",
        problem=f"with the solution files: the check crashed: {CRASH}",
        crash=CrashRule.INFRA,
        crash_reason="suite.yaml says crash: infra",
        settled=False,
    )


def test_untouched_files_the_check_cannot_run_on_leave_a_task_without_a_reference_unsettled(tmp_path):
    suite = encode_suite(tmp_path, ENCODE_SPLITS, {"bare-t": None})
    check = suite / "check.py"
    check.write_text(check.read_text().replace("import sys\n", "import sys\nimport a_module_nobody_installed\n"))
    assert checked(suite, "bare-t") == TaskCheck(
        "bare-t",
        problem="with the untouched files: the check lacks a module: ModuleNotFoundError: "
        "No module named 'a_module_nobody_installed'",
        reference=False,
        settled=False,
    )


def test_without_a_reference_a_crash_on_the_untouched_files_or_none_is_the_rule_and_no_reference_is_claimed(tmp_path):
    suite = encode_suite(tmp_path, ENCODE_SPLITS, {"bare-t": None})
    assert checked(suite, "bare-t") == TaskCheck(
        "bare-t",
        reference=False,
        crash=CrashRule.FAILURE,
        crash_reason="no reference solution; it crashes on the untouched files too, so a crash is how it says wrong",
    )
    (suite / "train" / "bare-t" / "files" / "solution.py").write_text("def encode(word):\n    return ''\n")
    assert checked(suite, "bare-t") == TaskCheck(
        "bare-t",
        reference=False,
        crash=CrashRule.INFRA,
        crash_reason="no reference solution, and the untouched files do not crash it",
    )


def test_a_reference_that_crashes_a_suite_ruling_crashes_failure_is_unsound_under_that_rule(tmp_path):
    suite = encode_suite(tmp_path, ENCODE_SPLITS, {"enc-v": "def encode(word):\n    return None\n"}, crash="failure")
    assert checked(suite, "enc-v") == TaskCheck(
        "enc-v",
        0.0,
        problem=f"it crashes on its own reference solution: the check crashed: {CRASH}",
        crash=CrashRule.FAILURE,
        crash_reason="suite.yaml says crash: failure",
    )


def test_a_reference_the_check_cannot_run_on_decides_nothing(tmp_path):
    suite = encode_suite(tmp_path, ENCODE_SPLITS)
    check = suite / "check.py"
    check.write_text(check.read_text().replace("import sys\n", "import sys\nimport a_module_nobody_installed\n"))
    assert checked(suite, "enc-v") == TaskCheck(
        "enc-v",
        problem="with the solution files: the check lacks a module: ModuleNotFoundError: "
        "No module named 'a_module_nobody_installed'",
        settled=False,
    )


def test_a_crash_on_the_untouched_files_under_crash_infra_leaves_a_sound_reference_unsettled(tmp_path):
    suite = encode_suite(tmp_path, ENCODE_SPLITS, crash="infra")
    assert checked(suite, "enc-v") == TaskCheck(
        "enc-v",
        1.0,
        problem=f"with the untouched files: the check crashed: {CRASH}",
        crash=CrashRule.INFRA,
        crash_reason="suite.yaml says crash: infra",
        settled=False,
    )


def test_a_reference_that_scores_0_is_unsound_whatever_the_untouched_files_do(tmp_path):
    suite = encode_suite(tmp_path, ENCODE_SPLITS, {"enc-v": "def encode(word):\n    return word\n"})
    assert checked(suite, "enc-v") == TaskCheck(
        "enc-v",
        0.0,
        problem=f"the reference must score 1; it scored 0, and with the untouched files: the check crashed: {CRASH}",
        crash=CrashRule.INFRA,
        crash_reason="its reference solution does not score 1",
    )
