"""The wheel ships prompts/, workspace_template/ and benchmarks/: build it, install it into a
fresh venv (dependencies borrowed from this environment), and run `wikiskill init` outside the
source tree."""

import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_installs_and_inits_outside_the_checkout(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path / "dist"), str(ROOT)],
        check=True,
        capture_output=True,
    )
    wheel = next((tmp_path / "dist").glob("wikiskill-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "wikiskill/_data/prompts/proposer_system.j2" in names
    assert "wikiskill/_data/workspace_template/wiki/skill-impact.md" in names
    assert "wikiskill/_data/benchmarks/example-qa/train.jsonl" in names
    assert "wikiskill/_data/benchmarks/python-bugfix/suite.yaml" in names
    assert "wikiskill/_data/benchmarks/harbor-example/fix-mean/task.toml" in names
    task_suites = ("/_data/benchmarks/python-bugfix/", "/_data/benchmarks/harbor-example/")
    assert not [
        name
        for name in names
        if name.endswith(".py")
        and not name.startswith("wikiskill/")
        or "/_data/" in name
        and name.endswith(".py")
        and not any(suite in name for suite in task_suites)
    ]  # no benchmark scripts: they import tests/ (the task suites' tasks and checks are Python files)

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (site / "borrowed-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # no .pth of ours runs from there
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True,
        capture_output=True,
    )
    where = subprocess.run(
        [str(python), "-c", "import wikiskill; print(wikiskill.__file__)"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert str(site) in where  # the installed wheel, not this checkout

    done = subprocess.run(
        [str(env_dir / "bin" / "wikiskill"), "init", "ws", "--benchmark", "example-qa", "--model", "openai/x"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "ws" / "wiki" / "skill-impact.md").is_file()
    assert 'benchmark: "example-qa"' in (tmp_path / "ws" / "wikiskill.yaml").read_text()
    status = subprocess.run(
        [str(env_dir / "bin" / "wikiskill"), "-C", "ws", "status"], cwd=tmp_path, capture_output=True, text=True
    )
    assert status.returncode == 0 and "0 completed" in status.stdout
