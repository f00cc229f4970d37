"""`harbor:NAME@VERSION` through a Harbor registry.json, offline: a local registry whose tasks live
in file:// git repositories, checked out at the registry's commit (not the repository's head),
once, into the cache; init fetches it and keeps the registry in wikiskill.yaml; a name or version
the registry lacks is refused in one line, nothing written; and the tasks run in containers."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import needs_docker
from harborsuites import UNREACHABLE, idle_engine, remove_images, tag_of, write_harbor_task
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.benchmarks.harbor_registry import CHECKOUTS_DIR, DATASETS_DIR
from wikiskill.cli import app
from wikiskill.core.errors import BenchmarkError


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


@pytest.fixture()
def engine(tmp_path, monkeypatch):
    idle_engine(tmp_path / "bin", monkeypatch)


def init(ws: Path, *more: str):
    arguments = ["init", str(ws), "--benchmark", "harbor:words@1.0", "--model", "openai/fake", "--api-base"]
    return CliRunner().invoke(app, [*arguments, UNREACHABLE, *more])


def test_init_fetches_a_dataset_by_name_at_the_registrys_commit_and_keeps_the_registry(
    tmp_path, local_registry, engine
):
    path, commit = local_registry
    result = init(tmp_path / "ws", "--registry-path", str(path))
    assert result.exit_code == 0, result.output
    config = yaml.safe_load((tmp_path / "ws" / "wikiskill.yaml").read_text())
    assert config["benchmark"] == "harbor:words@1.0" and config["harbor"]["registry"] == str(path)
    dataset = tmp_path / "cache" / DATASETS_DIR / f"words@1.0-{config['harbor']['dataset_digest']}"
    assert sorted(entry.name for entry in dataset.iterdir() if entry.is_dir()) == ["rev-cat", "rev-dog"]
    assert (dataset / "rev-cat" / "instruction.md").read_text().startswith("Write the word 'cat'")
    (checkout,) = (tmp_path / "cache" / CHECKOUTS_DIR).iterdir()
    assert checkout.name.endswith(commit)
    suite = api.harbor_suite(api.open_workspace(tmp_path / "ws"))
    assert suite is not None and sorted(suite.by_id) == ["rev-cat", "rev-dog"]


def test_a_dataset_once_made_is_read_without_its_registry(tmp_path, local_registry, engine):
    path, _ = local_registry
    assert init(tmp_path / "ws", "--registry-path", str(path)).exit_code == 0
    path.unlink()
    suite = api.harbor_suite(api.open_workspace(tmp_path / "ws"))
    assert suite is not None and len(suite.by_id) == 2


def add_local_task(registry_file: Path, task_id: str, entry: int = 0, only: bool = False) -> None:
    """A task beside the registry file (no git_url) added to its `entry`'s tasks, or made its only one."""
    write_harbor_task(registry_file.parent / "local", task_id, task_id.removeprefix("rev-"))
    datasets = json.loads(registry_file.read_text())
    task = {"name": task_id, "path": f"local/{task_id}"}
    datasets[entry]["tasks"] = [task] if only else [*datasets[entry]["tasks"], task]
    registry_file.write_text(json.dumps(datasets))


def suite_ids(ws: Path) -> list[str]:
    suite = api.harbor_suite(api.open_workspace(ws))
    assert suite is not None
    return sorted(suite.by_id)


def test_a_task_added_to_a_registry_entry_is_fetched_anew_and_said_while_the_old_workspace_keeps_its_own(
    tmp_path, local_registry, engine
):
    path, _ = local_registry
    assert init(tmp_path / "ws", "--registry-path", str(path)).exit_code == 0
    add_local_task(path, "rev-owl")
    result = init(tmp_path / "ws2", "--registry-path", str(path))
    assert result.exit_code == 0, result.output
    assert f"harbor:words@1.0 changed in {path} since it was last fetched (1 task added: rev-owl)" in result.output
    assert "Split: 2 train, 1 val, 0 test tasks." in result.output, result.output
    assert suite_ids(tmp_path / "ws2") == ["rev-cat", "rev-dog", "rev-owl"]
    assert suite_ids(tmp_path / "ws") == ["rev-cat", "rev-dog"]


def test_another_registrys_tasks_under_the_same_name_and_version_are_another_dataset(tmp_path, local_registry, engine):
    path, _ = local_registry
    assert init(tmp_path / "ws", "--registry-path", str(path)).exit_code == 0
    other = tmp_path / "other" / "registry.json"
    other.parent.mkdir()
    other.write_text(path.read_text())
    add_local_task(other, "rev-emu", only=True)
    result = init(tmp_path / "ws2", "--registry-path", str(other))
    assert result.exit_code == 0, result.output
    assert "changed" not in result.output
    assert suite_ids(tmp_path / "ws2") == ["rev-emu"] and suite_ids(tmp_path / "ws") == ["rev-cat", "rev-dog"]


def test_loading_a_workspaces_suite_on_a_machine_without_its_dataset_fetches_the_same_entry(
    tmp_path, local_registry, engine
):
    path, _ = local_registry
    assert init(tmp_path / "ws", "--registry-path", str(path)).exit_code == 0
    (made,) = (tmp_path / "cache" / DATASETS_DIR).iterdir()
    shutil.rmtree(made)
    assert suite_ids(tmp_path / "ws") == ["rev-cat", "rev-dog"]
    assert [folder.name for folder in (tmp_path / "cache" / DATASETS_DIR).iterdir()] == [made.name]


def test_a_workspace_whose_registry_entry_changed_is_refused_on_a_machine_without_its_dataset(
    tmp_path, local_registry, engine
):
    path, _ = local_registry
    assert init(tmp_path / "ws", "--registry-path", str(path)).exit_code == 0
    for made in (tmp_path / "cache" / DATASETS_DIR).iterdir():
        shutil.rmtree(made)
    add_local_task(path, "rev-owl")
    with pytest.raises(BenchmarkError, match="is no longer the entry this workspace was made with"):
        api.harbor_suite(api.open_workspace(tmp_path / "ws"))


def test_refresh_checks_out_anew_a_repository_the_registry_takes_at_its_head(tmp_path, local_registry, engine):
    path, _ = local_registry
    datasets = json.loads(path.read_text())
    for task in datasets[0]["tasks"]:
        del task["git_commit_id"]
    path.write_text(json.dumps(datasets))
    assert init(tmp_path / "ws", "--registry-path", str(path)).exit_code == 0
    repo = tmp_path / "tasks-repo"
    (repo / "tasks" / "rev-cat" / "instruction.md").write_text("NEWEST HEAD\n")
    git(repo, "commit", "-q", "-am", "newest")
    assert init(tmp_path / "ws2", "--registry-path", str(path)).exit_code == 0
    suite = api.harbor_suite(api.open_workspace(tmp_path / "ws2"))
    assert suite is not None and suite.by_id["rev-cat"].instruction == "LATER HEAD"
    assert init(tmp_path / "ws3", "--registry-path", str(path), "--refresh").exit_code == 0
    suite = api.harbor_suite(api.open_workspace(tmp_path / "ws3"))
    assert suite is not None and suite.by_id["rev-cat"].instruction == "NEWEST HEAD"


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


def test_a_commit_the_repository_lacks_is_refused_naming_it(tmp_path, local_registry, engine):
    path, commit = local_registry
    path.write_text(path.read_text().replace(commit, "0" * 40))
    result = init(tmp_path / "ws", "--registry-path", str(path))
    assert result.exit_code == 1 and f"at {'0' * 40}" in result.output
    assert not (tmp_path / "ws").exists() and not list((tmp_path / "cache" / DATASETS_DIR).glob("words@1.0*"))


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


def test_a_registry_url_is_read_like_a_file_and_kept_as_given(tmp_path, local_registry, engine):
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
