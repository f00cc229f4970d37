"""Whose crash it is, decided from evidence about the check: a HumanEval-style check (it imports the
agent's solution.py and calls .strip() on what encode() returns) crashes in its own code on a
wrong answer. Where it scores the task's solution/ 1, or, without one, crashes on the untouched
files too, that crash is the task's failure: scored 0, the traceback its feedback. A check that
crashes on its own reference makes the task unsound. suite.yaml's `crash: infra` restores the
rule that every such crash is infrastructure. Real task folders, real check processes."""

import json
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import needs_docker
from harborsuites import harbor_suite, keep_verdicts
from taskfolders import encode_suite, install_runner
from wikiskill import api
from wikiskill.benchmarks.base import BenchmarkKind
from wikiskill.benchmarks.harbor import HarborSuite
from wikiskill.benchmarks.settings import HarborIds, HarborSettings
from wikiskill.benchmarks.task_folders import CrashRule, TaskFolders
from wikiskill.cli import app
from wikiskill.environments.settings import EnvironmentSettings
from wikiskill.run.crash_rule import CrashRules, RuledScorer, unsound_folder_tasks, unsound_references
from wikiskill.run.folder_check import raw_scorer
from wikiskill.run.harbor_tasks import open_setup
from wikiskill.run.scorers import CheckCrashed
from wikiskill.run.soundness import VERDICTS_FILE
from wikiskill.store.traces import Trajectory

SPLITS = {"train": ["enc-t"], "val": ["enc-v", "bare-v"], "test": ["enc-e"]}
CRASH = "AttributeError: 'NoneType' object has no attribute 'strip'"


@pytest.fixture()
def runner_module(tmp_path, monkeypatch):
    yield install_runner(tmp_path, monkeypatch, "solution.py", "")
    sys.modules.pop("bugfix_agent", None)


def runs(root: Path) -> Counter:
    log = root / "runs.log"
    return Counter(log.read_text().split()) if log.exists() else Counter()


def evaluate_val(root: Path, suite: Path, agent: str) -> dict:
    ws = api.init_workspace(
        root / "ws",
        benchmark=f"tasks:{suite}",
        model="openai/fake-model",
        api_base="http://127.0.0.1:9/v1",
        agent=agent,
    )
    return {trajectory.task_id: trajectory for trajectory in api.evaluate(ws, "val").runs[0]}


def test_a_check_that_crashes_on_a_wrong_answer_scores_it_zero_with_the_traceback(tmp_path, runner_module):
    suite = encode_suite(tmp_path, SPLITS, {"bare-v": None})  # bare-v: no solution/, its untouched files crash
    val = evaluate_val(tmp_path, suite, runner_module)
    for task_id in ("enc-v", "bare-v"):
        trajectory = val[task_id]
        assert trajectory.failure is None and trajectory.score == 0.0, trajectory.error
        assert CRASH in trajectory.feedback and "Traceback (most recent call last):" in trajectory.feedback
    # the agent's run, then the evidence: enc-v's reference and untouched files, bare-v's untouched files
    assert runs(tmp_path) == {"enc-v": 3, "bare-v": 2}


def test_check_suite_says_which_rule_applies_to_each_task_and_why(tmp_path):
    splits = {"train": ["enc-t"], "val": ["enc-v", "bare-v", "fine-v"], "test": ["enc-e"]}
    wrong_reference = "def encode(word):\n    return None\n"
    suite = encode_suite(tmp_path, splits, {"bare-v": None, "fine-v": None, "enc-e": wrong_reference})
    # fine-v: no solution/, and its untouched encode() returns a string, so the check fails without a crash
    (suite / "val" / "fine-v" / "files" / "solution.py").write_text("def encode(word):\n    return ''\n")
    result = CliRunner().invoke(app, ["check-suite", f"tasks:{suite}"], env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    rows = {
        line.split("│")[1].strip(): [cell.strip() for cell in line.split("│")[2:-1]] for line in lines if "│" in line
    }
    assert rows["enc-t"] == ["1", "0", "ok", "failure"] and rows["enc-v"] == ["1", "0", "ok", "failure"]
    assert rows["enc-e"] == ["0", "-", "unsound", "infra"]
    assert rows["bare-v"] == ["-", "-", "unchecked", "failure"] and rows["fine-v"] == ["-", "-", "unchecked", "infra"]
    assert (
        "a crash is failure (its reference solution scores 1, so a crash is its verdict on the work): enc-t, enc-v"
        in lines
    )
    assert (
        "a crash is failure (no reference solution; it crashes on the untouched files too, so a crash is how it "
        "says wrong): bare-v" in lines
    )
    assert "a crash is infra (no reference solution, and the untouched files do not crash it): fine-v" in lines
    assert f"enc-e: it crashes on its own reference solution: the check crashed: {CRASH}" in lines
    assert "2 of 3 tasks sound." in lines


def test_the_evidence_is_kept_once_per_task_digest_and_an_edited_task_is_checked_again(tmp_path):
    suite_dir = encode_suite(tmp_path, SPLITS)
    state = tmp_path / "state"
    suite = TaskFolders(suite_dir)
    task = next(task for task in suite.tasks("val") if task.id == "enc-v")
    assert CrashRules(suite, state).rule(task) == (
        CrashRule.FAILURE,
        "its reference solution scores 1, so a crash is its verdict on the work",
    )
    assert runs(tmp_path) == {"enc-v": 2} and (state / VERDICTS_FILE).is_file()
    assert CrashRules(TaskFolders(suite_dir), state).rule(task)[0] is CrashRule.FAILURE
    assert runs(tmp_path) == {"enc-v": 2}  # known by its digest: not run again
    (suite_dir / "val" / "enc-v" / "solution" / "solution.py").write_text("def encode(word):\n    return None\n")
    edited = TaskFolders(suite_dir)
    assert CrashRules(edited, state).rule(task) == (
        CrashRule.INFRA,
        "it crashes on its own reference solution",
    )
    assert runs(tmp_path) == {"enc-v": 3}


def test_suite_yaml_crash_infra_makes_every_such_crash_infrastructure_again(tmp_path, runner_module):
    suite = encode_suite(tmp_path, SPLITS, {"bare-v": None}, crash="infra")
    val = evaluate_val(tmp_path, suite, runner_module)
    for task_id in ("enc-v", "bare-v"):
        trajectory = val[task_id]
        assert trajectory.failure == "infra" and trajectory.outcome()["score"] is None
        assert f"the check crashed: {CRASH}" in trajectory.error and "suite.yaml says crash: infra" in trajectory.error
    assert runs(tmp_path) == {"enc-v": 2, "bare-v": 2}  # retried once; no evidence gathered


def test_a_check_that_lacks_a_module_stays_infrastructure_whatever_the_reference_says(tmp_path, runner_module):
    suite = encode_suite(tmp_path, SPLITS)
    check = suite / "check.py"
    check.write_text(check.read_text().replace("import sys\n", "import sys\nimport a_module_nobody_installed\n"))
    trajectory = evaluate_val(tmp_path, suite, runner_module)["enc-v"]
    assert trajectory.failure == "infra" and "the check lacks a module: ModuleNotFoundError" in trajectory.error


def test_a_task_without_a_reference_is_passed_over_and_the_unsound_ones_after_it_still_found(tmp_path):
    wrong_reference = "def encode(word):\n    return word\n"
    splits = {"train": ["bare-t"], "val": ["enc-v"], "test": ["wrong-e"]}
    suite = encode_suite(tmp_path, splits, {"bare-t": None, "wrong-e": wrong_reference})
    unsound = unsound_folder_tasks(TaskFolders(suite), tmp_path / "state")
    assert list(unsound) == ["wrong-e"] and unsound["wrong-e"].startswith("the reference must score 1; it scored 0")


def test_a_kept_verdict_without_a_crash_rule_rules_a_crash_infra_and_runs_nothing(tmp_path):
    suite = TaskFolders(encode_suite(tmp_path, SPLITS))
    task = next(task for task in suite.tasks("val") if task.id == "enc-v")
    state = tmp_path / "state"
    state.mkdir()
    (state / VERDICTS_FILE).write_text(json.dumps({suite.task_digest(task): {"sound": True, "reason": "kept"}}))
    assert CrashRules(suite, state).rule(task) == (
        CrashRule.INFRA,
        "the check could not be run on the task's reference or untouched files",
    )
    assert runs(tmp_path) == {}


def test_a_crash_ruled_infra_keeps_the_check_s_output_as_its_feedback(tmp_path):
    suite = TaskFolders(encode_suite(tmp_path, SPLITS, crash="infra"))
    task = next(task for task in suite.tasks("val") if task.id == "enc-v")
    assert task.files is not None
    workdir = tmp_path / "work"
    shutil.copytree(task.files, workdir)
    trajectory = Trajectory(task_id=task.id, split=task.split, kind=BenchmarkKind.WORKDIR, question=task.question)
    scorer = raw_scorer(suite)
    with pytest.raises(CheckCrashed) as raised:
        RuledScorer(scorer, CrashRules(suite, tmp_path / "state", scorer)).score(task, trajectory, workdir)
    assert str(raised.value).endswith("(ruled infra: suite.yaml says crash: infra)")
    assert CRASH in raised.value.feedback and "Traceback (most recent call last):" in raised.value.feedback


@needs_docker
def test_the_unsound_references_of_a_harbor_suite_are_its_kept_container_verdicts(tmp_path):
    suite = HarborSuite(
        harbor_suite(tmp_path / "harbor"), HarborSettings(ids=HarborIds(train=["rev-cat"], val=["rev-owl"]))
    )
    state = tmp_path / "state"
    keep_verdicts(suite, state)
    setup = open_setup(EnvironmentSettings(), state, workspace=tmp_path)
    assert unsound_references(suite, lambda: setup, state, concurrency=2) == {"rev-owl": "rev-owl was checked"}
