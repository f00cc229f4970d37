"""`wikiskill tasks export SUITE --format harbor` writes a task-folder suite as Harbor task folders:
each task's files in its image, the suite's check hidden in tests/ until the agent is done, and
the check's verdict as the reward, run with the plain docker CLI as Harbor runs it."""

from __future__ import annotations

import os
import shutil
import tomllib
from pathlib import Path

import _pytest
import iniconfig
import packaging
import pluggy
import py
import pygments
import pytest
from typer.testing import CliRunner

from conftest import needs_docker
from harbor_docker import DockerRun
from wikiskill import api
from wikiskill.benchmarks import load_benchmark
from wikiskill.cli import app
from wikiskill.core.config import Config
from wikiskill.core.errors import BenchmarkError

BUGFIX = Path(__file__).resolve().parents[2] / "benchmarks" / "python-bugfix"
FIXED_FACTORIAL = """def factorial(n):
    if n < 0:
        raise ValueError("factorial of a negative number")
    return 1 if n == 0 else n * factorial(n - 1)
"""


def source_tasks() -> dict[str, str]:
    return {task.name: split for split in ("train", "val", "test") for task in (BUGFIX / split).iterdir()}


def test_python_bugfix_exports_one_harbor_folder_per_task_with_its_split(tmp_path):
    result = CliRunner().invoke(
        app, ["tasks", "export", f"tasks:{BUGFIX}", "--format", "harbor", "--out", str(tmp_path / "harbor")]
    )
    assert result.exit_code == 0, result.output
    assert "Wrote 20 Harbor task folders" in result.output and "(train 10, val 5, test 5)" in result.output
    exported = tmp_path / "harbor"
    assert {folder.name for folder in exported.iterdir()} == set(source_tasks())
    for name, split in source_tasks().items():
        task, source = exported / name, BUGFIX / split / name
        config = tomllib.loads((task / "task.toml").read_text())
        assert config["metadata"]["wikiskill_split"] == split
        assert config["environment"]["allow_internet"] is False and config["verifier"]["timeout_sec"] == 60.0
        assert (task / "instruction.md").read_text() == (source / "task.md").read_text()
        assert (
            task / "environment" / "Dockerfile"
        ).read_text() == "FROM wikiskill/base:bookworm\nWORKDIR /app\nCOPY files/ /app/\n"
        assert sorted(
            p.relative_to(task / "environment/files") for p in (task / "environment/files").rglob("*")
        ) == sorted(p.relative_to(source / "files") for p in (source / "files").rglob("*"))
        assert os.access(task / "tests" / "test.sh", os.X_OK)
        assert "python3 -m pytest -q" in (task / "tests" / "test.sh").read_text()


def test_a_suite_not_scored_by_a_command_is_refused_and_nothing_is_written(tmp_path):
    suite = tmp_path / "qa"
    for split in ("train", "val", "test"):
        (suite / split / f"q-{split}").mkdir(parents=True)
        (suite / split / f"q-{split}" / "task.md").write_text("What is 2+2?\n")
        (suite / split / f"q-{split}" / "answer").write_text("4\n")
    (suite / "suite.yaml").write_text("scorer: exact\n")
    with pytest.raises(BenchmarkError, match=r"only a suite scored by `scorer: command` exports to Harbor"):
        api.export_tasks(suite, tmp_path / "out")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["qa"]


def test_an_out_folder_with_files_in_it_is_refused(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mine.txt").write_text("keep me\n")
    result = CliRunner().invoke(
        app, ["tasks", "export", str(BUGFIX), "--format", "harbor", "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 1
    assert (
        result.output.strip()
        == f"error: {tmp_path / 'out'} exists and is not an empty folder: name a new one with --out"
    )
    assert [path.name for path in (tmp_path / "out").iterdir()] == ["mine.txt"]


def pytest_image(run: DockerRun, tmp_path: Path) -> str:
    """The base image with this interpreter's pytest (pure Python) added, as python-bugfix's check needs."""
    context = tmp_path / "pytest-image" / "environment"
    site = context / "site"
    site.mkdir(parents=True)
    for module in (pytest, _pytest, pluggy, iniconfig, packaging, pygments):
        shutil.copytree(
            Path(module.__file__).parent, site / module.__name__, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(py.__file__, site)
    (context / "Dockerfile").write_text(
        "FROM wikiskill/base:bookworm\nCOPY site/ /usr/local/lib/python3.11/dist-packages/\n"
    )
    return run.build(context.parent)


@needs_docker
def test_an_exported_task_scores_zero_untouched_and_one_once_its_bug_is_fixed(tmp_path):
    run = DockerRun()
    try:
        image = pytest_image(run, tmp_path)
        api.export_tasks(BUGFIX, tmp_path / "harbor", base_image=image)
        task = tmp_path / "harbor" / "factorial-base-case"
        (task / "solution").mkdir()
        (task / "solution" / "solve.sh").write_text(f"cat > /app/mathutil.py <<'EOF'\n{FIXED_FACTORIAL}EOF\n")
        built = run.build(task)
        untouched, fixed = run.trial(task, built, solve=False), run.trial(task, built, solve=True)
    finally:
        run.close()
    assert untouched.reward == 0.0 and "failed" in untouched.verifier_output
    assert fixed.reward == 1.0, fixed.verifier_output
    assert not untouched.tests_seen_before_verifier and not fixed.tests_seen_before_verifier


@needs_docker
def test_a_check_from_the_suite_folder_runs_hidden_and_its_score_line_is_the_reward(tmp_path):
    suite = tmp_path / "suite"
    for split in ("train", "val", "test"):
        (suite / split / f"t-{split}" / "files").mkdir(parents=True)
        (suite / split / f"t-{split}" / "task.md").write_text("Write done.txt.\n")
        (suite / split / f"t-{split}" / "files" / "input.txt").write_text("hello\n")
    (suite / "suite.yaml").write_text("scorer: command\ncommand: checks/half.sh\n")
    (suite / "checks").mkdir()
    (suite / "checks" / "half.sh").write_text(
        '#!/bin/sh\ntest -f input.txt && grep -q Write "$WIKISKILL_TASK_DIR/task.md" && echo "score: 0.5"\nexit 1\n'
    )
    (suite / "checks" / "half.sh").chmod(0o755)
    api.export_tasks(suite, tmp_path / "harbor")
    task = tmp_path / "harbor" / "t-val"
    assert not (task / "environment" / "checks").exists()
    run = DockerRun()
    try:
        trial = run.trial(task, run.build(task), solve=False)
    finally:
        run.close()
    assert trial.reward == 0.5, trial.verifier_output
    assert not trial.tests_seen_before_verifier


def test_exported_folders_read_back_through_the_harbor_reader(tmp_path):
    """The other direction, python-bugfix read from Harbor layout, is the `harbor:` reader's."""
    pytest.importorskip("wikiskill.benchmarks.harbor", reason="the `harbor:` reader is not on this branch")
    api.export_tasks(BUGFIX, tmp_path / "harbor")
    suite = load_benchmark(Config(benchmark=f"harbor:{tmp_path / 'harbor'}"))
    read = {task.id: task for split in ("train", "val", "test") for task in suite.tasks(split)}
    assert set(read) == set(source_tasks())
    for name, split in source_tasks().items():
        assert read[name].question == (BUGFIX / split / name / "task.md").read_text().strip()


def test_an_unknown_format_is_refused_naming_the_one_there_is(tmp_path):
    result = CliRunner().invoke(app, ["tasks", "export", str(BUGFIX), "--format", "swe", "--out", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert result.output.strip() == "error: unknown task suite format 'swe': use harbor"
    assert not (tmp_path / "o").exists()
