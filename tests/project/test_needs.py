"""Tests marked `needs` run a system program. Where it is missing they are skipped, naming the
Debian package to install, so the README's test command passes on any machine; in CI (CI=true) a
missing program fails them, so a broken install cannot pass for a green run. Each case runs pytest
on a small test file in its own process, with this suite's conftest."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
REASON = "needs `wikiskill-no-such-program` on PATH: apt-get install wikiskill-no-such-package"
NEEDY = """
import pytest


@pytest.mark.needs("wikiskill-no-such-program", package="wikiskill-no-such-package")
def test_runs_a_missing_program():
    raise AssertionError("ran without its program")


@pytest.mark.needs("wikiskill-no-such-program", "sh", package="dash")
def test_runs_a_program_found_under_its_second_name():
    import shutil
    assert shutil.which("sh")
"""
UNPACKAGED = """
import pytest


@pytest.mark.needs("sh")
def test_names_no_package():
    pass
"""


def run_pytest(folder: Path, ci: str | None, source: str = NEEDY) -> subprocess.CompletedProcess:
    (folder / "test_needy.py").write_text(source)
    env = {name: value for name, value in os.environ.items() if name != "CI"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH")]))
    if ci is not None:
        env["CI"] = ci
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the case needs only this suite's conftest: pytest starts 1 s sooner
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-rsE", "test_needy.py"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("ci", [None, "false"], ids=["unset", "false"])
def test_a_missing_program_skips_its_test_naming_the_package(tmp_path, ci):
    run = run_pytest(tmp_path, ci)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(rf"^SKIPPED \[1\] \S+conftest.py:\d+: {re.escape(REASON)}$", run.stdout, re.M), run.stdout
    assert "1 passed, 1 skipped in" in run.stdout and "ran without its program" not in run.stdout


@pytest.mark.parametrize("ci", ["true", "1", "TRUE"])
def test_a_missing_program_fails_its_test_in_ci(tmp_path, ci):
    run = run_pytest(tmp_path, ci)
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"ERROR test_needy.py::test_runs_a_missing_program - Failed: {REASON}" in run.stdout
    assert "1 passed, 1 error in" in run.stdout and "ran without its program" not in run.stdout


def test_a_needs_mark_without_its_package_is_an_error_even_where_the_program_is_installed(tmp_path):
    run = run_pytest(tmp_path, None, UNPACKAGED)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "a `needs` mark names its programs and their package" in run.stdout
    assert "1 error in" in run.stdout


def test_a_missing_npm_program_names_the_npm_install(tmp_path):
    source = NEEDY.replace('package="wikiskill-no-such-package"', 'package="@wikiskill/no-such-cli@1.0.0"')
    run = run_pytest(tmp_path, None, source)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "needs `wikiskill-no-such-program` on PATH: npm install -g @wikiskill/no-such-cli@1.0.0" in run.stdout
