"""The committed references are exactly what docs/generate.py makes from the code."""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def generator():
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_generate(docs: Path, *args: str, columns: str = "80") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": columns}
    return subprocess.run(
        [sys.executable, str(docs / "generate.py"), *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_the_committed_references_are_what_the_code_generates():
    stale = [
        str(path.relative_to(ROOT))
        for path, text in generator().generated().items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
    assert stale == [], "run `python docs/generate.py` and commit docs/reference/"


def test_check_names_the_stale_reference_writes_nothing_and_a_run_brings_it_back(tmp_path):
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    config_md = tmp_path / "docs" / "reference" / "config.md"
    edited = config_md.read_text(encoding="utf-8").replace("`gate.margin`", "`gate.slack`")
    config_md.write_text(edited, encoding="utf-8")

    check = run_generate(tmp_path / "docs", "--check")
    assert check.returncode == 1
    assert "docs/reference/config.md is stale" in check.stderr and "cli.md" not in check.stderr
    assert config_md.read_text(encoding="utf-8") == edited

    assert run_generate(tmp_path / "docs").returncode == 0
    assert config_md.read_text(encoding="utf-8") == (ROOT / "docs" / "reference" / "config.md").read_text(
        encoding="utf-8"
    )


def test_the_references_do_not_depend_on_the_terminal_width(tmp_path):
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    for columns in ("40", "250"):
        check = run_generate(tmp_path / "docs", "--check", columns=columns)
        assert (check.returncode, check.stderr) == (0, "")
