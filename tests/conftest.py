import functools
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest
from filelock import FileLock

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
# Shared across tests (and test runs): generated games and the datasets cache are pure functions
# of their inputs, so sharing them only saves time.
_SHARED = Path(tempfile.gettempdir()) / "wikiskill-test-cache"
os.environ.setdefault("WIKISKILL_CACHE_DIR", str(_SHARED / "wikiskill"))
os.environ.setdefault("HF_HOME", str(_SHARED / "hf"))
# rich fixes a console's width when it is made, from COLUMNS and LINES if they are set: the CLI's
# console is made at import, so a width set there (pytest-xdist sets COLUMNS in its workers, a shell
# may export it) would hold for every in-process command. Tests that need a width pass their own.
for _size in ("COLUMNS", "LINES"):
    os.environ.pop(_size, None)


CI_VALUES = ("1", "true", "yes")
"""Values of the CI variable that mean a CI run, where a missing system program is an error."""


def needs(*commands: str, package: str) -> pytest.MarkDecorator:
    """Mark a test that runs a system program: one of `commands` on PATH, installed by the Debian
    `package`, or by the npm package when `package` is a scoped npm name (`@scope/name@version`)."""
    return pytest.mark.needs(*commands, package=package)


def needs_cli(preset: type) -> pytest.MarkDecorator:
    """Mark a test that runs a coding-agent CLI preset's program, installed by the npm package the
    preset names (the one `wikiskill init --agent` names when the program is missing)."""
    return needs(preset.program, package=preset.package)


needs_chromium = needs("chromium", "chromium-browser", package="chromium")
needs_java = needs("java", package="openjdk-17-jre-headless")
needs_compose = needs("docker-compose", package="docker-compose")


@functools.cache
def docker_ready() -> str | None:
    """Why containers cannot run here, or None when the `docker` client reaches a running daemon."""
    if installed("docker") is None:
        return "needs `docker` on PATH: apt-get install docker.io"
    probe = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True)
    if probe.returncode != 0:
        return (
            "needs a running Docker daemon: as root, dockerd --storage-driver=overlay2 --iptables=false --bridge=none &"
        )
    return None


needs_docker = pytest.mark.needs_docker
"""A test that runs containers: skipped (failed under CI=true) when `docker_ready` says why not."""


def missing(reason: str) -> NoReturn:
    """What a test does without a program or package it needs: skip, naming what to install,
    except in CI (CI=true), where a missing one is a broken install and fails the test."""
    if os.environ.get("CI", "").strip().lower() in CI_VALUES:
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def installed(*commands: str) -> str | None:
    """The path of the first of `commands` on PATH."""
    return next(filter(None, map(shutil.which, commands)), None)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "needs(*commands, package): the test runs a system program, one of "
        "commands on PATH; package is the Debian (or @scoped npm) package "
        "that installs it",
    )
    config.addinivalue_line("markers", "needs_docker: the test runs containers through a Docker daemon")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules holding a `slow` test run first. Under pytest-xdist each module goes whole to one
    worker (`--dist loadscope`, in collection order with `--no-loadscope-reorder`): a long module
    dealt last would leave the other workers idle while it runs, short ones fill in at the end."""
    slow = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in slow)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked `needs` runs a system program: without it the test is skipped, naming the
    Debian (or npm) package to install, except in CI (CI=true), where a missing program is a failure. A mark
    that names no program or no package is an error in any run: it could never say what to install."""
    for mark in item.iter_markers("needs"):
        package = mark.kwargs.get("package")
        if not mark.args or not package:
            pytest.fail(
                f"{item.nodeid}: a `needs` mark names its programs and their package, "
                'e.g. needs("java", package="openjdk-17-jre-headless")',
                pytrace=False,
            )
        if installed(*mark.args) is None:
            install = "npm install -g" if package.startswith("@") else "apt-get install"
            reason = f"needs `{mark.args[0]}` on PATH: {install} {package}"
            missing(reason)
    if item.get_closest_marker("needs_docker") is not None:
        reason = docker_ready()
        if reason is not None:
            missing(reason)


@pytest.fixture(autouse=True)
def git_identity(monkeypatch, tmp_path_factory):
    """Tests never depend on the machine's git config (CI machines have none)."""
    isolate_git(monkeypatch, tmp_path_factory.mktemp("home"))


def isolate_git(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """git with no machine or user config (HOME at `home`) and a fixed identity."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Person")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "person@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Person")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "person@example.invalid")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


@dataclass(frozen=True)
class Evolved:
    """A workspace evolved two rounds through the CLI against the scripted server (round 1 merges
    spell-letters, round 2's useless-hint is rejected), then evaluated on the test split; and the
    requests the server answered during the rounds and during the evaluation."""

    root: Path
    during: list[dict]
    after: list[dict]


def _shared_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of this test run that every pytest-xdist worker of it sees (the base temporary
    folder of a plain run, its parent under xdist, where each worker has a base folder of its own)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def evolved_workspace(tmp_path_factory) -> Evolved:
    """The evolved workspace (`Evolved`), built once per test run, whichever worker asks first,
    under a file lock. Tests only read it: a test that changes a workspace copies it first."""
    from typer.testing import CliRunner

    from scripted import ScriptedWorld, evolve_through_cli
    from wikiskill.cli import app
    from wikiskill.testing.fakeserver import FakeOpenAIServer

    shared = _shared_root(tmp_path_factory) / "evolved"
    shared.mkdir(exist_ok=True)
    ws, requests = shared / "ws", shared / "requests.json"
    with FileLock(shared / "build.lock"), pytest.MonkeyPatch.context() as patch:
        if not requests.exists():
            shutil.rmtree(ws, ignore_errors=True)  # what a failed build left
            (shared / "home").mkdir(exist_ok=True)
            isolate_git(patch, shared / "home")  # a session fixture is made before `git_identity` runs
            runner = CliRunner()
            with FakeOpenAIServer(ScriptedWorld()) as server:
                evolve_through_cli(runner, ws, server.base_url, rounds=2)
                during = list(server.requests)
                result = runner.invoke(app, ["-C", str(ws), "eval", "--split", "test"])
                assert result.exit_code == 0, result.output
                after = server.requests[len(during) :]
            requests.write_text(json.dumps({"during": during, "after": after}))
    recorded = json.loads(requests.read_text())
    return Evolved(ws, recorded["during"], recorded["after"])
