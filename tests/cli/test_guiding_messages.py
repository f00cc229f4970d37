"""Messages that tell a user what to do next: the package that installs a missing CLI, the argv of
`init --agent command`, the nearest name to a misspelt setting, benchmark or command, the line of
a mistake in wikiskill.yaml, and `--version`. Each refusal writes nothing."""

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from wikiskill.cli import app
from workspaces import UNUSED_SERVER

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def one_error_line(result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("error: "), result.stderr
    return errors[0]


def init_qa(path: Path, *args: str):
    return run(
        "init", str(path), "--benchmark", "example-qa", "--model", "openai/x", "--api-base", UNUSED_SERVER, *args
    )


def program(folder: Path, name: str, script: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(f"#!/bin/sh\n{script}\n")
    (folder / name).chmod(0o755)


@pytest.mark.parametrize(
    ("runner", "package"),
    [
        ("qwen-code", "@qwen-code/qwen-code"),
        ("claude-code", "@anthropic-ai/claude-code"),
        ("codex", "@openai/codex"),
        ("gemini-cli", "@google/gemini-cli"),
    ],
)
def test_a_cli_runner_missing_from_path_names_the_npm_package_that_installs_it(tmp_path, monkeypatch, runner, package):
    bare = tmp_path / "bin"
    bare.mkdir()
    os.symlink(
        subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True).stdout.strip(), bare / "git"
    )
    monkeypatch.setenv("PATH", str(bare))
    line = one_error_line(init_qa(tmp_path / "ws", "--agent", runner))
    assert "which is not on PATH: install it with `npm install -g " + package + "@" in line
    assert not (tmp_path / "ws").exists()


def test_init_agent_command_takes_the_argv_as_one_line_and_the_cli_runs_with_it(tmp_path, monkeypatch):
    calls = tmp_path / "calls.txt"
    program(tmp_path / "bin", "mycli", f'echo "$#|$1|$2|$(echo "$3" | grep -c backwards)" >> {calls}; echo 42')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    ws = tmp_path / "ws"
    result = init_qa(ws, "--agent", "command", "--command", "mycli --model {model} '{prompt}'")
    assert result.exit_code == 0, result.output
    agent = yaml.safe_load((ws / "wikiskill.yaml").read_text())["agent"]
    assert (agent["runner"], agent["command"]) == ("command", ["mycli", "--model", "{model}", "{prompt}"])

    result = run("-C", str(ws), "eval", "--split", "val")
    assert result.exit_code == 0, result.output
    tasks = [line.split("|") for line in calls.read_text().splitlines() if line != "1|--version||0"]
    assert tasks and all(task[:3] == ["3", "--model", "openai/x"] for task in tasks)
    assert any(task[3] != "0" for task in tasks)  # the prompt, one item however many words it has


def test_init_agent_command_takes_the_argv_as_repeated_args(tmp_path, monkeypatch):
    program(tmp_path / "bin", "mycli", 'echo "<answer>42</answer>"')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = init_qa(tmp_path / "ws", "--agent", "command", "--arg", "mycli", "--arg", "--ask=it's {prompt} &  <now>")
    assert result.exit_code == 0, result.output
    agent = yaml.safe_load((tmp_path / "ws" / "wikiskill.yaml").read_text())["agent"]
    assert agent["command"] == ["mycli", "--ask=it's {prompt} &  <now>"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--agent", "command"],
            "--agent command needs the CLI's argv: --command 'mycli --model {model} {prompt}', or one --arg per item",
        ),
        (["--agent", "command", "--command", "mycli {prompt}", "--arg", "mycli"], "either as --command or as --arg"),
        (["--agent", "command", "--command", "mycli '{prompt}"], "does not split into words: No closing quotation"),
        (
            ["--agent", "command", "--command", "sh -c {prmpt}"],
            "{prmpt} in '{prmpt}' is no placeholder (did you mean '{prompt}'?)",
        ),
        (["--command", "mycli {prompt}"], "--command and --arg give the argv of --agent command, not of builtin"),
    ],
)
def test_init_refuses_a_command_runner_without_a_usable_argv_and_writes_nothing(tmp_path, args, expected):
    assert expected in one_error_line(init_qa(tmp_path / "ws", *args))
    assert not (tmp_path / "ws").exists()


def workspace_with(tmp_path: Path, old: str, new: str) -> tuple[Path, int]:
    """An example-qa workspace whose wikiskill.yaml has `old` replaced by `new`, and the line (from 1)
    where `new` starts."""
    assert init_qa(tmp_path / "ws").exit_code == 0
    config = tmp_path / "ws" / "wikiskill.yaml"
    text = config.read_text()
    assert old in text
    config.write_text(text.replace(old, new, 1))
    return tmp_path / "ws", text[: text.index(old)].count("\n") + 1


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("concurrency:", "concurency:", "unknown setting 'concurency' (did you mean 'concurrency'?)"),
        ("  max_steps:", "  max_step:", "unknown setting 'agent.max_step' (did you mean 'agent.max_steps'?)"),
        (
            "proposer:\n",
            "max_turns: 3\nproposer:\n",
            "unknown setting 'max_turns' (did you mean 'proposer.max_turns'?)",
        ),
        ("budget:\n", "zzz: 1\nbudget:\n", "unknown setting 'zzz'; the settings of the top level are benchmark, model"),
    ],
)
def test_an_unknown_setting_names_its_line_and_the_nearest_setting(tmp_path, old, new, expected):
    ws, line = workspace_with(tmp_path, old, new)
    before = (ws / "wikiskill.yaml").read_text()
    for command in (["status"], ["evolve"]):
        message = one_error_line(run("-C", str(ws), *command))
        assert f"wikiskill.yaml, line {line}: {expected}" in message
        assert "Extra inputs" not in message
    assert (ws / "wikiskill.yaml").read_text() == before


def test_a_bad_value_is_reported_on_the_line_it_is_on(tmp_path):
    ws, line = workspace_with(tmp_path, "concurrency: 4", "concurrency: lots")
    assert f"wikiskill.yaml, line {line}: concurrency: Input should be a valid integer" in one_error_line(
        run("-C", str(ws), "status")
    )


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "concurrency: 4",
            "concurrency: [4",
            "while parsing a flow sequence: expected ',' or ']', but got ':' on line",
        ),
        ('model: "openai/x"', 'model: "openai/x', "the quote opened here closes only on line"),
        (
            "concurrency: 4",
            "concurrency: 'four",
            "while scanning a quoted scalar: found unexpected end of stream on line",
        ),
    ],
)
def test_a_construct_left_open_is_reported_on_the_line_it_opens(tmp_path, old, new, expected):
    ws, line = workspace_with(tmp_path, old, new)
    message = one_error_line(run("-C", str(ws), "status"))
    assert f"wikiskill.yaml, line {line}: not valid YAML ({expected}" in message
    assert int(message.split(expected)[1].split()[0].rstrip(":)")) > line


def test_an_unknown_benchmark_suggests_the_nearest_name(tmp_path):
    line = one_error_line(run("init", str(tmp_path / "ws"), "--benchmark", "textworld-cookin"))
    assert "unknown benchmark 'textworld-cookin' (did you mean 'textworld-cooking'?)" in line
    assert not (tmp_path / "ws").exists()
    ws, line = workspace_with(tmp_path, '"example-qa"', '"exampl-qa"')
    assert (
        f"wikiskill.yaml, line {line}: benchmark: unknown benchmark 'exampl-qa' (did you mean 'example-qa'?)"
        in one_error_line(run("-C", str(ws), "log"))
    )


def test_an_unknown_command_suggests_the_nearest_name():
    result = run("stauts")
    assert result.exit_code == 2
    assert "No such command 'stauts'. Did you mean 'status'?" in result.output


def test_version_prints_the_version_the_package_declares():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    done = subprocess.run(
        [sys.executable, "-m", "wikiskill", "--version"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, f"wikiskill {declared}\n", "")


def test_an_empty_test_split_is_warned_of_at_init_and_named_where_eval_would_use_it(tmp_path, monkeypatch):
    from harborsuites import harbor_suite, idle_engine, init_harbor

    idle_engine(tmp_path / "bin", monkeypatch)
    suite = harbor_suite(tmp_path)
    shutil.rmtree(suite / "rev-dog")  # three tasks: two train, one val, none left for test
    result = init_harbor(tmp_path / "ws", suite)
    assert result.exit_code == 0, result.output
    assert "Split: 2 train, 1 val, 0 test tasks." in result.output
    assert "Warning: the test split is empty: `eval --split test` and `uplift` have nothing to score" in result.output
    error = one_error_line(run("-C", str(tmp_path / "ws"), "eval", "--split", "test"))
    assert error.startswith("error: the test split is empty"), error
    assert "infra" not in error
    branches = subprocess.run(["git", "-C", str(tmp_path / "ws"), "branch", "--list"], capture_output=True, text=True)
    assert "test-looks" not in branches.stdout  # nothing was scored, so test was not looked at


def test_a_val_task_deleted_after_init_is_named_when_evolve_validates_main_again(tmp_path):
    from scripted import ScriptedWorld
    from wikiskill.testing.fakeserver import FakeOpenAIServer

    suite = tmp_path / "qa"
    shutil.copytree(ROOT / "benchmarks" / "example-qa", suite)
    with FakeOpenAIServer(ScriptedWorld()) as server:
        ws = tmp_path / "ws"
        arguments = ["--benchmark", f"jsonl:{suite}", "--model", "openai/fake-model", "--api-base", server.base_url]
        assert run("init", str(ws), *arguments).exit_code == 0
        assert run("-C", str(ws), "evolve", "--rounds", "1").exit_code == 0
        val = suite / "val.jsonl"
        val.write_text("".join(line for line in val.read_text().splitlines(keepends=True) if '"val-03"' not in line))
        result = run("-C", str(ws), "evolve", "--rounds", "1")
    assert result.exit_code == 0, result.output
    assert (
        "r002 re-validate incumbent: val has 5 tasks now, 6 when main was last validated (gone: val-03); "
        "its tasks are part of the evaluation fingerprint" in result.output
    )
