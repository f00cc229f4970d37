"""`harbor:NAME@VERSION` through a Harbor registry.json, offline: a local registry whose tasks live
in file:// git repositories, checked out at the registry's commit (not the repository's head),
once, into the cache; init fetches it and keeps the registry in wikiskill.yaml; a name or version
the registry lacks is refused in one line, nothing written; and the tasks run in containers."""

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import needs_docker
from harborsuites import UNREACHABLE, remove_images, tag_of, write_harbor_task
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.benchmarks.harbor_registry import CHECKOUTS_DIR, DATASETS_DIR
from wikiskill.cli import app


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def task_repository(root: Path) -> tuple[Path, str]:
    """A repository of two word tasks under tasks/; the commit the registry pins, then a later
    commit that breaks both (the head, which must not be used)."""
    repo = root / "tasks-repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for task_id, word in (("rev-cat", "cat"), ("rev-dog", "dog")):
        write_harbor_task(repo / "tasks", task_id, word, nonce=root.name)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "two tasks")
    pinned = git(repo, "rev-parse", "HEAD")
    for task_id in ("rev-cat", "rev-dog"):
        (repo / "tasks" / task_id / "instruction.md").write_text("LATER HEAD\n")
    git(repo, "commit", "-q", "-am", "later")
    return repo, pinned


def registry(root: Path, repo: Path, commit: str) -> Path:
    path = root / "registry.json"
    tasks = [
        {"name": name, "git_url": f"file://{repo}", "git_commit_id": commit, "path": f"tasks/{name}"}
        for name in ("rev-cat", "rev-dog")
    ]
    datasets = [
        {"name": "words", "version": "1.0", "description": "Reverse words.", "tasks": tasks},
        {"name": "words", "version": "head", "description": "Unpinned.", "tasks": []},
        {"name": "other", "version": "2.0", "description": "", "tasks": []},
    ]
    path.write_text(json.dumps(datasets))
    return path


@pytest.fixture()
def local_registry(tmp_path, monkeypatch):
    monkeypatch.setenv("WIKISKILL_CACHE_DIR", str(tmp_path / "cache"))
    repo, commit = task_repository(tmp_path)
    yield registry(tmp_path, repo, commit), commit
    remove_images([tag_of(repo / "tasks" / "rev-cat")])


def init(ws: Path, *more: str):
    arguments = ["init", str(ws), "--benchmark", "harbor:words@1.0", "--model", "openai/fake", "--api-base"]
    return CliRunner().invoke(app, [*arguments, UNREACHABLE, *more])


def test_init_fetches_a_dataset_by_name_at_the_registrys_commit_and_keeps_the_registry(tmp_path, local_registry):
    path, commit = local_registry
    result = init(tmp_path / "ws", "--registry-path", str(path))
    assert result.exit_code == 0, result.output
    config = yaml.safe_load((tmp_path / "ws" / "wikiskill.yaml").read_text())
    assert config["benchmark"] == "harbor:words@1.0" and config["harbor"]["registry"] == str(path)
    dataset = tmp_path / "cache" / DATASETS_DIR / "words@1.0"
    assert sorted(entry.name for entry in dataset.iterdir() if entry.is_dir()) == ["rev-cat", "rev-dog"]
    assert (dataset / "rev-cat" / "instruction.md").read_text().startswith("Write the word 'cat'")
    (checkout,) = (tmp_path / "cache" / CHECKOUTS_DIR).iterdir()
    assert checkout.name.endswith(commit)
    suite = api.harbor_suite(api.open_workspace(tmp_path / "ws"))
    assert suite is not None and sorted(suite.by_id) == ["rev-cat", "rev-dog"]


def test_a_dataset_once_made_is_read_without_its_registry(tmp_path, local_registry):
    path, _ = local_registry
    assert init(tmp_path / "ws", "--registry-path", str(path)).exit_code == 0
    path.unlink()
    suite = api.harbor_suite(api.open_workspace(tmp_path / "ws"))
    assert suite is not None and len(suite.by_id) == 2


@pytest.mark.parametrize(
    ("benchmark", "message"),
    [
        ("harbor:words@9.9", "has no version 9.9 of words; it has 1.0, head"),
        ("harbor:nosuch@1.0", "has no dataset nosuch"),
    ],
)
def test_a_dataset_the_registry_lacks_is_refused_in_one_line_with_nothing_written(
    tmp_path, local_registry, benchmark, message
):
    path, _ = local_registry
    arguments = ["init", str(tmp_path / "ws"), "--benchmark", benchmark, "--model", "openai/fake"]
    result = CliRunner().invoke(app, [*arguments, "--registry-path", str(path)])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.output
    assert not (tmp_path / "ws").exists()


def test_a_commit_the_repository_lacks_is_refused_naming_it(tmp_path, local_registry):
    path, commit = local_registry
    path.write_text(path.read_text().replace(commit, "0" * 40))
    result = init(tmp_path / "ws", "--registry-path", str(path))
    assert result.exit_code == 1 and f"at {'0' * 40}" in result.output
    assert not (tmp_path / "ws").exists() and not (tmp_path / "cache" / DATASETS_DIR / "words@1.0").exists()


@needs_docker
def test_a_registry_datasets_tasks_run_in_containers_the_oracle_one_and_nop_zero(tmp_path, local_registry):
    path, _ = local_registry
    assert init(tmp_path / "ws", "--registry-path", str(path)).exit_code == 0
    ws = tmp_path / "ws"
    config = yaml.safe_load((ws / "wikiskill.yaml").read_text())
    config["harbor"]["ids"] = {"train": ["rev-cat"], "val": ["rev-dog"]}
    (ws / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    scores = {
        agent: api.evaluate(api.open_workspace(ws), "val", ref="main", options=RunOptions(agent=agent)).runs[0][0].score
        for agent in ("oracle", "nop")
    }
    assert scores == {"oracle": 1.0, "nop": 0.0}
    checks = api.check_suite("harbor:words@1.0", registry=str(path))
    assert [(check.task_id, check.sound) for check in checks] == [("rev-cat", True), ("rev-dog", True)]


def test_a_registry_url_is_read_like_a_file_and_kept_as_given(tmp_path, local_registry):
    path, _ = local_registry
    result = init(tmp_path / "ws", "--registry-url", path.as_uri())
    assert result.exit_code == 0, result.output
    assert yaml.safe_load((tmp_path / "ws" / "wikiskill.yaml").read_text())["harbor"]["registry"] == path.as_uri()


def test_a_registry_path_and_url_together_are_refused(tmp_path, local_registry):
    path, _ = local_registry
    result = init(tmp_path / "ws", "--registry-path", str(path), "--registry-url", path.as_uri())
    assert result.exit_code == 1 and "either as --registry-path or as --registry-url, not both" in result.output


def test_a_registry_for_a_suite_that_takes_no_datasets_is_refused_with_nothing_written(tmp_path, local_registry):
    path, _ = local_registry
    arguments = ["init", str(tmp_path / "ws"), "--benchmark", "example-qa", "--model", "openai/fake"]
    arguments += ["--registry-path", str(path)]
    result = CliRunner().invoke(app, arguments)
    assert result.exit_code == 1
    assert "a registry names datasets (harbor:NAME@VERSION), which example-qa does not take" in result.output
    assert not (tmp_path / "ws").exists() and not (tmp_path / "cache").exists()
