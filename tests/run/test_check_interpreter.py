"""A command check that cannot start says what to install, never scores 0: the shipped
python-bugfix suite, its known-good fix in place, run by a wikiskill whose interpreter lacks
pytest (a venv holding everything of this one's but pytest) is an infrastructure failure naming
pytest; and wikiskill's own install brings pytest, so the suite's check finds it."""

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from python_bugfix import SOLUTIONS, TASK_OF
from wikiskill.benchmarks import BenchmarkKind
from wikiskill.benchmarks.task_folders import SuiteSettings
from wikiskill.core.errors import InfrastructureError
from wikiskill.core.resources import data_dir
from wikiskill.run.scorers import CommandScorer
from wikiskill.store.traces import Trajectory

PYTEST_PARTS = ("pytest", "_pytest", "py.py")
"""The site-packages entries that are pytest's."""

SCORE_ONE = """
import json, shutil, sys
from pathlib import Path
from python_bugfix import SOLUTIONS, TASK_OF, suite_check
from wikiskill.core.errors import InfrastructureError
task, workdir = TASK_OF[sys.argv[1]], Path(sys.argv[2])
shutil.copytree(task.files, workdir)
shutil.copytree(SOLUTIONS / task.id, workdir, dirs_exist_ok=True)
try:
    print(json.dumps({"score": suite_check(task, workdir)}))
except InfrastructureError as exc:
    print(json.dumps({"infra": str(exc)}))
"""


def venv_without_pytest(root: Path) -> Path:
    """A venv whose site-packages link to every package of this interpreter's but pytest's."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    own = Path(next(p for p in sys.path if p.endswith("site-packages")))
    shadow = root / "borrowed"
    shadow.mkdir()
    for entry in own.iterdir():
        if entry.name in PYTEST_PARTS or entry.name.startswith("pytest") or entry.suffix == ".pth":
            continue
        (shadow / entry.name).symlink_to(entry)
    for pth in own.glob("*.pth"):  # editable installs and namespace hooks, read from the shadow
        (shadow / pth.name).write_text(pth.read_text())
    site = next((root / "lib").glob("python3*/site-packages"))
    (site / "borrowed.pth").write_text(f"{shadow}\n")
    return root / "bin" / "python3"


def test_without_pytest_the_bugfix_check_is_infra_naming_pytest_not_a_zero(tmp_path):
    python = venv_without_pytest(tmp_path / "venv")
    assert subprocess.run([str(python), "-c", "import pytest"], capture_output=True).returncode != 0
    tests = Path(__file__).parents[1]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests.parent), str(tests)])}
    task = sorted(TASK_OF)[0]
    done = subprocess.run(
        [str(python), "-c", SCORE_ONE, task, str(tmp_path / "work")],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=True,
    )
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert "score" not in outcome, outcome
    assert "the check could not start" in outcome["infra"] and "-m pip install pytest" in outcome["infra"]


def test_wikiskill_installed_without_extras_brings_the_pytest_the_bugfix_check_runs():
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert any(dependency.startswith("pytest") for dependency in pyproject["project"]["dependencies"])
    assert "python3 -m pytest" in (data_dir("benchmarks") / "python-bugfix" / "suite.yaml").read_text()
    assert shutil.which("python3") and SOLUTIONS.is_dir()


@pytest.mark.parametrize("status", [1, 2])
def test_a_check_of_python_m_a_missing_module_is_infra_whatever_its_status(tmp_path, status):
    script = tmp_path / "check"
    script.write_text(f"#!/bin/sh\necho '/opt/py/bin/python3: No module named nosuchcheck' >&2\nexit {status}\n")
    script.chmod(0o755)
    scorer = CommandScorer([str(script)], SuiteSettings(scorer="command", command=str(script)), tmp_path)
    task = TASK_OF[sorted(TASK_OF)[0]]
    trajectory = Trajectory(task_id=task.id, split=task.split, kind=BenchmarkKind.WORKDIR, question=task.question)
    with pytest.raises(InfrastructureError, match=r"/opt/py/bin/python3 -m pip install nosuchcheck"):
        scorer.score(task, trajectory, tmp_path)
