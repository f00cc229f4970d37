"""Messages that tell a user what to do next: the package that installs a missing CLI, the argv of
`init --agent command`, the nearest name to a misspelt setting, benchmark or command, the line of
a mistake in wikiskill.yaml, and `--version`. Each refusal writes nothing."""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from wikiskill.cli import app
from workspaces import UNUSED_SERVER

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def one_error_line(result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("error: "), result.stderr
    return errors[0]


def init_qa(path: Path, *args: str):
    return run("init", str(path), "--benchmark", "example-qa", "--model", "openai/x", "--api-base", UNUSED_SERVER,
               *args)


def workspace_with(tmp_path: Path, old: str, new: str) -> tuple[Path, int]:
    """An example-qa workspace whose wikiskill.yaml has `old` replaced by `new`, and the line (from 1)
    where `new` starts."""
    assert init_qa(tmp_path / "ws").exit_code == 0
    config = tmp_path / "ws" / "wikiskill.yaml"
    text = config.read_text()
    assert old in text
    config.write_text(text.replace(old, new, 1))
    return tmp_path / "ws", text[:text.index(old)].count("\n") + 1


def test_an_unknown_benchmark_suggests_the_nearest_name(tmp_path):
    line = one_error_line(run("init", str(tmp_path / "ws"), "--benchmark", "textworld-cookin"))
    assert "unknown benchmark 'textworld-cookin' (did you mean 'textworld-cooking'?)" in line
    assert not (tmp_path / "ws").exists()
    ws, _ = workspace_with(tmp_path, '"example-qa"', '"exampl-qa"')
    assert "unknown benchmark 'exampl-qa' (did you mean 'example-qa'?)" in one_error_line(run("-C", str(ws), "log"))


def test_an_unknown_command_suggests_the_nearest_name():
    result = run("statu")
    assert result.exit_code == 2
    assert "No such command 'statu'. Did you mean 'status'?" in result.output
