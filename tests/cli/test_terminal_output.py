"""What the real `wikiskill` process prints, piped and on a narrow terminal: skill names whole,
help text wrapped by the terminal rather than by the docstrings, an empty skills block said so,
and a refusal before any progress."""

import fcntl
import inspect
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from inprocess import evolve_scripted, scripted_workspace
from scripted import SPELL, ScriptedWorld, create
from taskfolders import bugfix_suite, install_runner
from wikiskill import api
from wikiskill.cli import app, history, running, skills

LONG_NAME = "reverse-upper-case-letters-one-by-one"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
WIKISKILL = [sys.executable, "-m", "wikiskill"]


def piped(*args: str, columns: int = 40, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*WIKISKILL, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": str(columns), **env},
    )


def in_terminal(*args: str, columns: int = 40) -> tuple[int, str]:
    """Run wikiskill with a pseudo-terminal `columns` wide as stdin, stdout and stderr."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    process = subprocess.Popen(
        [*WIKISKILL, *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**env, "TERM": "xterm"},
        close_fds=True,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return process.wait(timeout=120), ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))


@pytest.fixture(scope="module")
def long_named(tmp_path_factory):
    """A workspace whose one round accepted a skill with a long name."""
    ws = scripted_workspace(tmp_path_factory.mktemp("long") / "ws")
    evolve_scripted(ws, 1, ScriptedWorld(proposals={1: create(LONG_NAME, SPELL)}))
    assert [skill.name for skill in api.load_skills(ws)] == [LONG_NAME]
    return ws


@pytest.mark.parametrize("command", ["log", "skills"])
def test_skill_names_are_never_cut_piped_or_on_a_narrow_terminal(long_named, command):
    run = piped("-C", str(long_named.root), command)
    assert run.returncode == 0, run.stderr
    assert LONG_NAME in run.stdout and "…" not in run.stdout
    code, shown = in_terminal("-C", str(long_named.root), command)
    assert code == 0, shown
    assert LONG_NAME in shown


def test_piped_log_is_one_plain_line_per_round(long_named):
    lines = piped("-C", str(long_named.root), "log").stdout.splitlines()
    assert lines[0].split() == ["round", "train", "candidate", "val", "incumbent", "decision", "cost", "$", "tokens"]
    assert len(lines) == 2 and lines[1].split()[:1] == ["001"] and f"create {LONG_NAME}" in lines[1]


@pytest.mark.parametrize(
    "command", [history.report_command, history.show_command, skills.skills, running.evolve, running.compare_command]
)
def test_help_breaks_lines_at_the_terminal_width_not_mid_sentence(command):
    name = {"report_command": "report", "show_command": "show", "compare_command": "compare"}.get(
        command.__name__, command.__name__
    )
    run = piped(name, "--help", columns=1000)
    assert run.returncode == 0, run.stderr
    for paragraph in inspect.cleandoc(command.__doc__).split("\n\n"):
        assert " ".join(paragraph.split()) in run.stdout


def test_prompt_with_no_skills_says_there_are_none(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    run = piped("-C", str(ws.root), "prompt")
    assert run.returncode == 0 and run.stdout == ""
    assert run.stderr.strip() == "no skills at main: the skills block is empty"


def test_compare_with_the_builtin_agent_on_task_folders_refuses_before_any_progress(tmp_path, monkeypatch):
    runner = install_runner(tmp_path, monkeypatch)
    try:
        ws = api.init_workspace(tmp_path / "ws", f"tasks:{bugfix_suite(tmp_path)}", model="offline", agent=runner)
    finally:
        sys.modules.pop("bugfix_agent", None)
    code, shown = in_terminal("-C", str(ws.root), "compare", "main", "main", "--agent", "builtin", columns=200)
    lines = shown.strip().splitlines()
    assert code == 1 and len(lines) == 1, shown
    assert lines[0].startswith("error: --agent: no built-in offline agent plays task folders")
    assert not (ws.state_dir / "results").exists()


def test_help_lists_flags_without_a_value_type():
    group = get_command(app)
    paths = [[]] + [[name] for name in group.commands]
    paths += [[name, sub] for name, command in group.commands.items() for sub in getattr(command, "commands", {})]
    for path in paths:
        result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        assert "<bool>" not in result.output, path
    top = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).output
    assert re.search(r"--version +Print wikiskill's version", top) and re.search(r"--help +Show this message", top)


def test_piped_sentences_are_printed_whole_not_wrapped_at_the_width(tmp_path):
    done = piped("init", str(tmp_path / "ws"), "--benchmark", "example-qa", "--model", "openai/x", columns=40)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"Created workspace {tmp_path / 'ws'} (example-qa, model openai/x)." in lines
    assert f"Next: {sys.executable} -m wikiskill -C {tmp_path / 'ws'} evolve --rounds 3" in lines


def test_the_next_hint_names_the_command_as_the_user_can_run_it(tmp_path):
    """`.venv/bin/wikiskill`, as the README runs it, is not on PATH: the hint says its path; where
    PATH finds that very executable, the bare name."""
    executable = Path(sys.executable).parent / "wikiskill"
    elsewhere = os.pathsep.join(part for part in os.environ["PATH"].split(os.pathsep) if part != str(executable.parent))
    hints = {}
    for name, path in (("off", elsewhere), ("on", f"{executable.parent}{os.pathsep}{elsewhere}")):
        done = subprocess.run(
            [str(executable), "init", str(tmp_path / name), "--benchmark", "example-qa", "--model", "openai/x"],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PATH": path},
        )
        assert done.returncode == 0, done.stderr
        hints[name] = next(line for line in done.stdout.splitlines() if line.startswith("Next: "))
    assert hints == {
        "off": f"Next: {executable} -C {tmp_path / 'off'} evolve --rounds 3",
        "on": f"Next: wikiskill -C {tmp_path / 'on'} evolve --rounds 3",
    }


def test_offline_textworld_shows_each_games_actions_and_points_not_an_empty_answer(tmp_path):
    ws = str(tmp_path / "ws")
    runner = CliRunner()
    assert runner.invoke(app, ["init", ws, "--train", "2", "--val", "2", "--test", "1"]).exit_code == 0
    evaluated = runner.invoke(app, ["-C", ws, "eval", "--split", "val"], env={"COLUMNS": "200"})
    assert evaluated.exit_code == 0, evaluated.output
    header = next(line for line in evaluated.output.splitlines() if "task" in line and "score" in line)
    assert "actions" in header and "last action" in header and "prediction" not in header
    assert runner.invoke(app, ["-C", ws, "evolve", "--rounds", "1"]).exit_code == 0
    train_task = sorted(path.stem for path in (tmp_path / "ws" / "raw/r001/train").glob("*.json"))[0]
    shown = runner.invoke(app, ["-C", ws, "show", "1", "--task", train_task]).output
    assert re.search(r"--- game over after \d+ actions: (won|not won), score \d", shown), shown
    assert "answer: None" not in shown
