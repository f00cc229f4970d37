"""Every error a user can cause is one line on stderr and exit 1, refused before any model call."""

import shutil
from pathlib import Path

import pytest

from cli_errors import one_error_line, run


def test_init_on_a_file_is_refused_in_one_line(tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    assert "notes.txt is a file, not a folder" in one_error_line(run("init", str(tmp_path / "notes.txt")))
    assert "Not a directory" in one_error_line(run("init", str(tmp_path / "notes.txt" / "ws")))
    assert (tmp_path / "notes.txt").read_text() == "mine\n"


def test_an_unknown_agent_blames_the_flag_not_a_file(tmp_path):
    init = one_error_line(run("init", str(tmp_path / "new"), "--benchmark", "example-qa", "--agent", "nosuch"))
    assert not (tmp_path / "new").exists()
    assert run("init", str(tmp_path / "ws"), "--benchmark", "example-qa", "--model", "openai/x").exit_code == 0
    evolve = one_error_line(run("-C", str(tmp_path / "ws"), "evolve", "--agent", "nosuch"))
    for line in (init, evolve):
        assert line.startswith("error: --agent nosuch: 'nosuch' is no agent runner") and "wikiskill.yaml" not in line


def test_a_workspace_folder_without_git_is_told_that_git_is_missing(tmp_path):
    assert run("init", str(tmp_path / "ws"), "--benchmark", "example-qa", "--model", "openai/x").exit_code == 0
    shutil.rmtree(tmp_path / "ws" / ".git")
    line = one_error_line(run("-C", str(tmp_path / "ws"), "status"))
    assert "has a wikiskill.yaml but no git repository (.git is missing)" in line


def test_a_single_value_where_a_section_belongs_is_said_without_a_class_name(tmp_path):
    ws = yaml_with(tmp_path, "gate: 3\n")
    line = one_error_line(run("-C", str(ws), "status"))
    assert "gate: should be a section of settings" in line and "GateSettings" not in line


def yaml_with(tmp_path: Path, extra: str, replace: tuple[str, str] = ("", "")) -> Path:
    assert run("init", str(tmp_path / "ws"), "--benchmark", "example-qa", "--model", "openai/x").exit_code == 0
    config = tmp_path / "ws" / "wikiskill.yaml"
    config.write_text(config.read_text().replace(*replace) + extra)
    return tmp_path / "ws"


@pytest.mark.parametrize(
    "command", [["status"], ["log"], ["skills"], ["prompt"], ["lint"], ["export", "out"], ["evolve"], ["eval"]]
)
def test_every_command_refuses_a_key_given_twice(tmp_path, command):
    ws = yaml_with(tmp_path, "agent:\n  model: a\nagent:\n  model: b\n")
    assert "not valid YAML ('agent' is set twice" in one_error_line(run("-C", str(ws), *command))


@pytest.mark.parametrize("command", [["status"], ["log"], ["prompt"], ["evolve"]])
def test_every_command_refuses_an_unknown_benchmark(tmp_path, command):
    ws = yaml_with(tmp_path, "", ("example-qa", "nope"))
    assert "benchmark: unknown benchmark 'nope'" in one_error_line(run("-C", str(ws), *command))


def test_every_command_refuses_yaml_that_does_not_parse(tmp_path):
    ws = yaml_with(tmp_path, "model: [\n")
    for command in (["status"], ["log"]):
        assert "not valid YAML" in one_error_line(run("-C", str(ws), *command))


@pytest.mark.parametrize("command", [["status"], ["evolve"], ["lock", "any"]])
def test_a_wikiskill_yaml_that_is_not_utf8_is_refused_in_one_line_naming_the_line(tmp_path, command):
    ws = yaml_with(tmp_path, "")
    config = ws / "wikiskill.yaml"
    config.write_bytes(b"# caf\xe9 settings\n" + config.read_bytes())  # a Latin-1 comment
    line = one_error_line(run("-C", str(ws), *command))
    assert line == (f"error: {config}, line 1 (byte offset 5): not UTF-8 text (byte 0xe9); it must be saved as UTF-8")
