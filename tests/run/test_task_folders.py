"""`tasks:PATH` suites: a bad folder is refused in one line with nothing written, the command
scorer gives partial credit, reads JUnit reports and kills a check that runs too long (with what it
started), and the suite's files, check and judge enter the evaluation fingerprint."""

import asyncio
import os
import stat
import sys
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import git
from taskfolders import BUGGY, PYTEST, bugfix_suite, checks_of, install_runner, write_task
from wikiskill import api
from wikiskill.benchmarks import BenchmarkKind, Task
from wikiskill.benchmarks.task_folders import SuiteSettings, TaskFolders
from wikiskill.cli import app
from wikiskill.core.config import Config
from wikiskill.core.errors import BudgetExceeded
from wikiskill.llm.meter import Meter
from wikiskill.llm.settings import BudgetSettings
from wikiskill.loop.fingerprint import eval_setup
from wikiskill.roles.sandbox import Sandbox
from wikiskill.roles.settings import Role
from wikiskill.run.scorers import CommandScorer, ScorerTimeout, build_scorer
from wikiskill.run.workdir_tasks import WorkdirTaskAgent
from wikiskill.store.traces import Trajectory, Usage
from workspaces import UNUSED_SERVER


@pytest.fixture()
def runner_module(tmp_path, monkeypatch):
    yield install_runner(tmp_path, monkeypatch)
    sys.modules.pop("bugfix_agent", None)


def set_yaml(path: Path, **settings: object) -> None:
    path.write_text(yaml.safe_dump({**yaml.safe_load(path.read_text()), **settings}))


def no_task_md(suite):
    (suite / "train" / "fix-a" / "task.md").unlink()


def check_not_executable(suite):
    (suite / "check.sh").write_text("#!/bin/sh\nexit 0\n")
    set_yaml(suite / "suite.yaml", command="./check.sh")


def check_not_on_path(suite):
    set_yaml(suite / "suite.yaml", command="no-such-checker-xyz --all")


def judged_without_rubric(suite):
    (suite / "suite.yaml").write_text("scorer: judge\n")


def duplicate_id(suite):
    write_task(suite, "test", "fix-a")


def unknown_scorer(suite):
    set_yaml(suite / "suite.yaml", scorer="pytest")


def unknown_key(suite):
    set_yaml(suite / "suite.yaml", timeout_s=5)


def empty_split(suite):
    for task in (suite / "val").iterdir():
        for path in sorted(task.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        task.rmdir()


def no_suite_yaml(suite):
    (suite / "suite.yaml").unlink()


def qa_without_answer(suite):
    (suite / "suite.yaml").write_text("scorer: exact\n")


def stray_file(suite):
    (suite / "train" / "fix-a" / "rubric.txt").write_text("typo of rubric.md")


def missing_split(suite):
    (suite / "test" / "fix-e" / "task.md").rename(suite / "task.md")
    for path in sorted((suite / "test").rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    (suite / "test").rmdir()


def command_for_a_judge(suite):
    set_yaml(suite / "suite.yaml", scorer="judge")


def unreviewed_draft(suite):
    (suite / "train" / "fix-a" / "REVIEW.md").write_text("Drafted by tasks from-sessions: review me.")


@pytest.mark.parametrize(
    "breaking, message",
    [
        (no_task_md, "fix-a/task.md is missing"),
        (check_not_executable, "check.sh is not executable"),
        (check_not_on_path, "'no-such-checker-xyz' is not an executable on PATH"),
        (judged_without_rubric, "missing rubric.md or expectations"),
        (duplicate_id, "duplicate task id 'fix-a'"),
        (unknown_scorer, "unknown scorer 'pytest'"),
        (unknown_key, "timeout_s: unknown setting"),
        (empty_split, "no tasks (the split is empty)"),
        (no_suite_yaml, "suite.yaml is missing"),
        (qa_without_answer, "missing answer"),
        (stray_file, "unknown rubric.txt"),
        (missing_split, "test is missing"),
        (command_for_a_judge, "command is for scorer: command"),
        (unreviewed_draft, "a draft from `wikiskill tasks from-sessions`: review task.md and rubric.md, then delete"),
    ],
)
def test_init_refuses_a_bad_suite_in_one_line_and_writes_nothing(tmp_path, breaking, message):
    suite = bugfix_suite(tmp_path)
    breaking(suite)
    ws = tmp_path / "ws"
    result = CliRunner().invoke(
        app, ["init", str(ws), "--benchmark", f"tasks:{suite}", "--model", "openai/m", "--api-base", UNUSED_SERVER]
    )
    lines = result.output.strip().splitlines()
    assert result.exit_code != 0 and len(lines) == 1 and message in lines[0], result.output
    assert not ws.exists()


def test_a_judged_suite_without_a_judge_model_is_refused(tmp_path, runner_module):
    suite = tmp_path / "judged"
    suite.mkdir()
    (suite / "suite.yaml").write_text("scorer: judge\n")
    for split in ("train", "val", "test"):
        write_task(suite, split, f"{split}-1", prompt="Answer well.", rubric="Is polite.")
    ws = tmp_path / "ws"
    result = CliRunner().invoke(app, ["init", str(ws), "--benchmark", f"tasks:{suite}", "--agent", runner_module])
    lines = result.output.strip().splitlines()
    assert result.exit_code != 0 and len(lines) == 1 and "has no judge model" in lines[0], result.output
    assert not ws.exists()


def test_a_suite_scored_by_a_qa_scorer_is_a_qa_suite(tmp_path):
    suite = tmp_path / "qa"
    suite.mkdir()
    (suite / "suite.yaml").write_text("scorer: numeric\n")
    for split in ("train", "val", "test"):
        write_task(suite, split, f"{split}-1", prompt="What is 6 times 7?", answer="42\n")
    folders = TaskFolders(suite)
    task = folders.tasks("val")[0]
    assert folders.spec.kind is BenchmarkKind.QA and task.answer == "42" and task.files is None
    assert folders.score(task, "It is 42.") == 1.0 and folders.score(task, "41") == 0.0


def scorer(tmp_path: Path, command: str, **settings: object) -> tuple[CommandScorer, Task, Path]:
    """A command scorer on a one-task workdir holding calc.py and its tests."""
    suite = bugfix_suite(tmp_path)
    set_yaml(suite / "suite.yaml", command=command, **settings)
    folders = TaskFolders(suite)
    task = folders.tasks("train")[0]
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "calc.py").write_text(BUGGY)
    (workdir / "test_calc.py").write_text(
        checks_of("test_needs_a_positive_result") + "\n\ndef test_zero():\n    assert absolute(0) == 0\n"
    )
    return CommandScorer(folders.command, folders.scoring, folders.directory), task, workdir


def unscored(task: Task) -> Trajectory:
    return Trajectory(task_id=task.id, split=task.split, kind=BenchmarkKind.WORKDIR, question=task.question)


def test_a_last_score_line_gives_partial_credit(tmp_path):
    script = tmp_path / "partial.py"
    script.write_text("print('2 of 8 checks passed')\nprint('score: 0.25')\nraise SystemExit(3)\n")
    command_scorer, task, workdir = scorer(tmp_path, f"{sys.executable} {script}")
    score = command_scorer.score(task, unscored(task), workdir)
    assert score.value == 0.25 and "2 of 8 checks passed" in score.feedback


def test_a_junit_report_gives_the_share_passed_and_names_the_failure(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    command_scorer, task, workdir = scorer(tmp_path, f"{PYTEST} --junitxml=report.xml", junit="report.xml")
    score = command_scorer.score(task, unscored(task), workdir)
    assert score.value == pytest.approx(2 / 3)
    assert "test_needs_a_positive_result" in score.feedback and "must come back positive" in score.feedback
    assert "test_zero" not in score.feedback


def test_a_check_past_its_timeout_fails_the_task_alone_and_its_children_die(tmp_path):
    pid_file = tmp_path / "child.pid"
    script = tmp_path / "hang.sh"
    script.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pid_file}\nsleep 300\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    command_scorer, task, _ = scorer(tmp_path, str(script), timeout=1)
    with pytest.raises(ScorerTimeout):
        command_scorer.score(task, unscored(task), tmp_path / "work")

    class Idle:
        async def play(self, task: Task, workdir: Path) -> Trajectory:
            return unscored(task)

    started = time.monotonic()
    trajectory = asyncio.run(WorkdirTaskAgent(Idle(), command_scorer).run(task))
    assert time.monotonic() - started < 10
    assert trajectory.score == 0 and "ran past its timeout of 1 s" in trajectory.error
    assert_gone(int(pid_file.read_text()))


def test_the_files_are_copied_in_and_the_workdir_removed(tmp_path):
    folders = TaskFolders(bugfix_suite(tmp_path))
    seen: list[Path] = []

    class Looker:
        async def play(self, task: Task, workdir: Path) -> Trajectory:
            seen.append(workdir)
            assert sorted(p.name for p in workdir.iterdir()) == ["calc.py", "test_calc.py"]
            return unscored(task)

    class Constant:
        def score(self, task, trajectory, workdir):
            from wikiskill.store.traces import Score

            return Score(value=0.5, feedback="half")

    trajectory = asyncio.run(WorkdirTaskAgent(Looker(), Constant()).run(folders.tasks("val")[0]))
    assert trajectory.score == 0.5 and trajectory.feedback == "half" and not seen[0].exists()


def setup_id(suite: Path, **config: object) -> str:
    settings = Config.model_validate({"benchmark": f"tasks:{suite}", "model": "openai/m", **config})
    return eval_setup(settings, TaskFolders(suite), "val").id


def test_the_fingerprint_follows_the_check_the_files_the_rubric_and_the_judge(tmp_path):
    suite = bugfix_suite(tmp_path / "a")
    first = setup_id(suite)
    assert setup_id(suite) == first
    set_yaml(suite / "suite.yaml", command=f"{PYTEST} -x")
    second = setup_id(suite)
    (suite / "val" / "fix-c" / "files" / "calc.py").write_text(BUGGY + "# changed\n")
    third = setup_id(suite)
    assert len({first, second, third}) == 3

    judged = tmp_path / "judged"
    judged.mkdir()
    (judged / "suite.yaml").write_text("scorer: judge\n")
    for split in ("train", "val", "test"):
        write_task(judged, split, f"{split}-1", prompt="Answer well.", rubric="Is polite.")
    ids = [setup_id(judged)]
    (judged / "val" / "val-1" / "rubric.md").write_text("Is polite and brief.")
    ids.append(setup_id(judged))
    ids.append(setup_id(judged, judge={"samples": 3}))
    ids.append(setup_id(judged, judge={"model": "openai/other"}))
    assert len(set(ids)) == 4


def test_the_sandbox_refuses_a_val_trace_wherever_it_is_stored(tmp_path):
    ws = api.init_workspace(tmp_path / "ws", benchmark="example-qa", model="openai/m", api_base=UNUSED_SERVER)
    val = Trajectory(task_id="val-07", split="val", kind=BenchmarkKind.WORKDIR, question="q", feedback="SECRET")
    train = val.model_copy(update={"task_id": "train-01", "split": "train"})
    ws.commit({"raw/r001/train/val-07.json": val.to_json(), "raw/r001/train/train-01.json": train.to_json()}, "traces")
    sandbox = Sandbox(ws, "main")
    assert "SECRET" in sandbox.read("traces/train-01")[0]
    with pytest.raises(LookupError, match="validation and test material"):
        sandbox.read("traces/val-07")
    assert "SECRET" not in val.render()


def test_suite_settings_document_every_key():
    assert all(field.description for field in SuiteSettings.model_fields.values())


def test_a_check_that_passes_takes_what_it_left_running_with_it(tmp_path):
    pid_file = tmp_path / "server.pid"
    script = tmp_path / "leave.sh"
    script.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pid_file}\nexit 0\n")  # it keeps the output open
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    command_scorer, task, workdir = scorer(tmp_path, str(script))
    assert command_scorer.score(task, unscored(task), workdir).value == 1.0
    assert_gone(int(pid_file.read_text()))


def assert_gone(pid: int) -> None:
    for _ in range(50):
        if not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            return
        time.sleep(0.1)
    os.kill(pid, 9)
    pytest.fail("a process the check started outlived it")


def test_the_judge_stops_the_command_at_its_share_of_the_budget():
    meter = Meter(BudgetSettings(max_usd=1.0, judge_share=0.25))
    meter.add(Role.AGENT, Usage(calls=1, cost_usd=0.5))
    meter.add(Role.JUDGE, Usage(calls=1, cost_usd=0.2))
    meter.check()
    meter.add(Role.JUDGE, Usage(calls=1, cost_usd=0.05))
    with pytest.raises(BudgetExceeded, match="the judge spent \\$0.2500"):
        meter.check()


SCORER_SOURCE = """
from wikiskill.store.traces import Score


def score(task, trajectory, workdir):
    fixed = "-x" in (workdir / "calc.py").read_text()
    return Score(value=1.0 if fixed else 0.25, feedback="calc.py still returns x unchanged" * (not fixed))
"""


def test_a_python_scorer_scores_the_workdir_and_its_source_keys_the_fingerprint(tmp_path, monkeypatch):
    (tmp_path / "my_scorer.py").write_text(SCORER_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    suite = bugfix_suite(tmp_path / "s")
    (suite / "suite.yaml").write_text("scorer: python:my_scorer:score\n")
    try:
        folders = TaskFolders(suite)
        task = folders.tasks("val")[0]
        scorer = build_scorer(folders, judge=lambda: pytest.fail("no judge here"))
        workdir = tmp_path / "work"
        workdir.mkdir()
        (workdir / "calc.py").write_text(BUGGY)
        score = scorer.score(task, unscored(task), workdir)
        assert (score.value, score.feedback) == (0.25, "calc.py still returns x unchanged")
        before = setup_id(suite)
        (tmp_path / "my_scorer.py").write_text(SCORER_SOURCE.replace("0.25", "0.5"))
        sys.modules.pop("my_scorer")
        assert setup_id(suite) != before
    finally:
        sys.modules.pop("my_scorer", None)


def test_the_offline_roles_with_ones_own_agent_say_that_nothing_could_be_mined(tmp_path, runner_module):
    suite = bugfix_suite(tmp_path)
    ws = api.init_workspace(tmp_path / "ws", f"tasks:{suite}", model="offline", agent=runner_module)
    result = api.evolve(ws, 1)
    assert result.rounds_completed == 1
    bodies = git(ws.root, "log", "--first-parent", "--format=%B%x1e", "main").split("\x1e")
    assert any(body.strip().startswith("r001 maintain: 0 pattern page(s) written") for body in bodies)
    impact = git(ws.root, "show", "main:wiki/skill-impact.md")
    assert "no pattern could be mined from these traces" in impact and "already covered" not in impact
