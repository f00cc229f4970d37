"""The README stays true: every setting, every command, and CI running its test command."""

import re
from pathlib import Path

from pydantic import BaseModel
from typer.main import get_command

from wikiskill.cli import app
from wikiskill.config import Config
from wikiskill.traces import Trajectory

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def setting_paths(model: type[BaseModel], prefix: str = ""):
    for name, field in model.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            yield from setting_paths(field.annotation, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}"


def test_every_setting_is_documented():
    missing = [path for path in setting_paths(Config) if f"`{path}`" not in README]
    assert missing == []


def test_every_command_is_documented():
    group = get_command(app)
    names = [f"wikiskill {name}" for name in group.commands]
    assert len(names) >= 9
    assert [name for name in names if f"`{name}" not in README] == []


def test_ci_runs_the_readme_test_command():
    test_command = ('python3 -m venv .venv && .venv/bin/pip install -e ".[test]" && '
                    '.venv/bin/pip install --no-deps bfcl-eval==2026.3.23 && .venv/bin/python -m pytest')
    assert test_command in README
    ci = (ROOT / ".ci" / "run").read_text()
    assert '.venv/bin/pip install -q -e ".[test]"' in ci
    assert "CI=true .venv/bin/python -m pytest" in ci  # a test whose system program is missing fails there
    assert ".venv/bin/pip install -q --no-deps bfcl-eval==2026.3.23" in ci


def test_the_quickstart_workspace_does_not_show_as_untracked_in_the_clone():
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    quickstart = re.search(r"wikiskill init (\S+) &&", README).group(1)
    assert Path(quickstart).is_absolute() or quickstart.startswith("..") or f"/{quickstart}/" in ignored


def test_the_readme_names_every_field_of_a_val_jsonl_line():
    line = Trajectory(task_id="t", split="val", kind="qa", question="q").outcome()
    described = README[README.index("raw/rNNN/val.jsonl"):README.index("wiki/index.md")]
    assert [key for key in line if key not in described] == []
    assert "scores only" not in README
