"""The workspace's writes: one compare-and-swap commit per step, a working tree synced from it
(and recoverable when a crash interrupts the sync), and human edits detected before a round."""

import json
import os
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import git
from inprocess import evolve_scripted, scripted_workspace
from scripted import ScriptedWorld
from wikiskill.cli import app
from wikiskill.core.errors import WorkspaceError
from wikiskill.core.redact import Scrubber
from wikiskill.store.commits import build_commit
from wikiskill.store.sync import sync_worktree
from wikiskill.store.workspace import MAIN, Workspace
from workspaces import first_parent_steps


@pytest.fixture()
def ws(tmp_path) -> Workspace:
    return scripted_workspace(tmp_path / "ws")


# -- commits and the working tree ------------------------------------------------------------------


def test_commit_syncs_unusual_file_names(ws):
    names = ["raw/r001/train/tâche 1.json", 'raw/r001/train/quote"d.json', "wiki/patterns/ünï.md"]
    ws.commit({name: f"text of {name}\n" for name in names}, "add\n")
    for name in names:
        assert (ws.root / name).read_text() == f"text of {name}\n"
    ws.commit({names[0]: None}, "remove\n")
    assert not (ws.root / names[0]).exists()
    assert git(ws.root, "status", "--porcelain") == ""
    assert not (ws.state_dir / "sync.json").exists()


def test_logs_extended_in_process_equal_what_git_reads_back(ws):
    ws.log(MAIN)  # remembered, so the run's own commits extend it instead of rereading git
    evolve_scripted(ws, rounds=2)
    assert (ws.head(), True) in ws._logs  # main's log came from extending, not from git
    fresh = Workspace(ws.root)
    branches = [MAIN, *(f"refs/tags/{tag}" for tag in ws.refs("refs/tags/"))]
    for ref in branches:
        assert ws.log(ref) == fresh.log(ref), ref
    assert len(ws.log(MAIN)) >= 8 and all(c.meta.step for c in ws.log(MAIN)[:-1])


@pytest.mark.parametrize(
    "path",
    [
        "../outside.md",
        "/tmp/abs.md",
        ".git/config",
        "wiki/.GIT/hooks/x",
        "wiki/./a.md",
        "wiki//a.md",
        "",
        "wiki/a\0b.md",
    ],
)
def test_commit_refuses_paths_outside_the_workspace(ws, path):
    head = ws.head()
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        ws.commit({path: "x"}, "escape\n")
    assert ws.head() == head


def test_commit_never_moves_another_checked_out_branch(ws):
    git(ws.root, "checkout", "-q", "-b", "mine")
    mine = ws.resolve("mine")
    with pytest.raises(WorkspaceError, match="mine checked out.*git checkout main"):
        ws.commit({"wiki/x.md": "x\n"}, "x\n")
    assert ws.resolve("mine") == mine and ws.head() == mine


def test_compare_and_swap_refuses_a_moved_branch(ws):
    old = ws.head()
    ws.commit({"wiki/a.md": "a\n"}, "a\n")
    with pytest.raises(WorkspaceError, match="moved while"):
        ws.move_branch(MAIN, old, old=old)  # `old` is no longer main's tip
    assert not (ws.state_dir / "sync.json").exists()


def test_recover_finishes_an_interrupted_sync_and_clears_stale_locks(ws):
    old = ws.head()
    new = build_commit(
        ws, old, {"wiki/patterns/new.md": "new\n", "wiki/log.md": None}, "published, then killed\n", Scrubber()
    )
    ws._marker_path().write_text(json.dumps({"new": new}))  # what a run killed right after update-ref leaves
    ws.repo.git.update_ref("refs/heads/main", new, old)
    git_dir = ws.root / ".git"
    stale = [git_dir / "index.lock", git_dir / "HEAD.lock", git_dir / "refs/heads/main.lock", ws.state_dir / "index-x"]
    for lock in stale:
        lock.write_text("")
        os.utime(lock, (time.time() - 60, time.time() - 60))
    assert ws.recover() is True
    assert (ws.root / "wiki/patterns/new.md").read_text() == "new\n" and not (ws.root / "wiki/log.md").exists()
    assert git(ws.root, "status", "--porcelain") == ""
    assert not any(lock.exists() for lock in stale)
    assert ws.recover() is False


def test_recover_drops_a_marker_whose_commit_never_landed(ws):
    ws._marker_path().write_text(json.dumps({"new": "0" * 40}))  # killed before update-ref
    assert ws.recover() is True
    assert git(ws.root, "status", "--porcelain") == ""


def test_recover_finishes_a_pending_sync_when_the_next_commit_never_landed(ws):
    old = ws.head()
    landed = build_commit(ws, old, {"raw/r001/train/t1.json": "{}\n"}, "published, its sync still queued\n", Scrubber())
    ws.repo.git.update_ref("refs/heads/main", landed, old)
    never = build_commit(ws, landed, {"wiki/x.md": "x\n"}, "killed before its ref moved\n", Scrubber())
    ws._marker_path().write_text(json.dumps({"new": never}))  # the next publish's marker, over the queued sync
    assert ws.recover() is True
    assert (ws.root / "raw/r001/train/t1.json").read_text() == "{}\n"
    assert git(ws.root, "status", "--porcelain") == ""


def test_sync_never_deletes_through_a_symlinked_folder(ws, tmp_path):
    ws.commit({"wiki/patterns/a.md": "a\n"}, "a\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.md").write_text("precious\n")
    patterns = ws.root / "wiki/patterns"
    for child in patterns.iterdir():
        child.unlink()
    patterns.rmdir()
    patterns.symlink_to(outside, target_is_directory=True)
    with pytest.raises(WorkspaceError, match="uncommitted edits"):
        ws.commit({"wiki/patterns/a.md": None}, "delete a\n")
    old = ws.head()
    new = build_commit(ws, old, {"wiki/patterns/a.md": None}, "x\n", Scrubber())
    sync_worktree(ws._git_bytes, old, new)  # as `recover` would after a crash
    assert (outside / "a.md").read_text() == "precious\n"


# -- human edits ------------------------------------------------------------------------------------


def test_evolve_refuses_uncommitted_edits_with_one_line(ws):
    (ws.root / "wiki/patterns/mine.md").write_text("my notes\n")
    before = ws.head()
    result = CliRunner().invoke(app, ["-C", str(ws.root), "evolve", "--rounds", "1"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: uncommitted edits in wiki/patterns/mine.md")
    assert "--commit-human-edits" in lines[0]
    assert ws.head() == before


def test_evolve_refuses_edits_to_raw(ws):
    (ws.root / "raw/r001").mkdir(parents=True)
    (ws.root / "raw/r001/fake.json").write_text("{}")
    with pytest.raises(WorkspaceError, match="raw/ has uncommitted changes"):
        evolve_scripted(ws, commit_human_edits=True)


def test_commit_human_edits_records_a_human_step_and_carries_on(ws, tmp_path, monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-HUMAN-SECRET-42")
    outside = tmp_path / "outside.md"
    outside.write_text("content from outside the workspace\n")
    (ws.root / "wiki/patterns/mine.md").write_text("my notes; key tok-HUMAN-SECRET-42\n")
    (ws.root / "wiki/log.md").unlink()
    (ws.root / "skills/linked.md").symlink_to(outside)
    with open(ws.root / "wikiskill.yaml", "a") as config:
        config.write("# my note\n")
    git(ws.root, "add", "wikiskill.yaml")  # staged outside skills/ and wiki/: a settings step, not this one
    result = evolve_scripted(ws, rounds=1, commit_human_edits=True)
    assert result.rounds_completed == 1
    assert first_parent_steps(ws.root) == [None, "human", "settings", "baseline", "rollout", "maintain", "gate"]
    human = git(ws.root, "rev-list", "--first-parent", "main").split()[-2]
    trailers = git(ws.root, "log", "-1", "--format=%(trailers:only,unfold)", human)
    assert "Wikiskill-Step: human" in trailers and "Wikiskill-Round: 0" in trailers
    assert git(ws.root, "log", "-1", "--format=%an", human).strip() == "Test Person"
    changed = git(ws.root, "show", "--name-status", "--format=", human).split("\n")
    assert sorted(filter(None, changed)) == ["A\tskills/linked.md", "A\twiki/patterns/mine.md", "D\twiki/log.md"]
    assert git(ws.root, "ls-tree", human, "skills/linked.md").startswith("120000")  # a link, never its target
    assert "outside the workspace" not in git(ws.root, "log", "-p", "main")
    assert "tok-HUMAN-SECRET-42" not in git(ws.root, "log", "-p", "main")
    assert "[REDACTED]" in (ws.root / "wiki/patterns/mine.md").read_text()
    assert outside.read_text() == "content from outside the workspace\n"
    assert git(ws.root, "status", "--porcelain") == ""


def test_edited_settings_are_committed_before_the_round_that_runs_under_them_with_the_diff(ws):
    config = ws.root / "wikiskill.yaml"
    config.write_text(config.read_text().replace("\nconcurrency: 4\n", "\nconcurrency: 2\n"))
    assert git(ws.root, "status", "--porcelain") == " M wikiskill.yaml\n"
    assert evolve_scripted(ws, rounds=1).rounds_completed == 1
    assert git(ws.root, "status", "--porcelain") == ""
    assert first_parent_steps(ws.root) == [None, "settings", "baseline", "rollout", "maintain", "gate"]
    settings = git(ws.root, "rev-list", "--first-parent", "main").split()[-2]
    message = git(ws.root, "log", "-1", "--format=%B", settings)
    assert message.startswith("settings: wikiskill.yaml changed before round 1\n")
    assert "\n-concurrency: 4\n+concurrency: 2\n" in message
    assert "Wikiskill-Step: settings" in message
    assert git(ws.root, "show", "--name-only", "--format=", settings).split() == ["wikiskill.yaml"]
    evolve_scripted(ws, rounds=1)  # unchanged settings: no second settings step
    assert first_parent_steps(ws.root).count("settings") == 1


class EditingWorld(ScriptedWorld):
    """A person edits a file once, while the maintainer is thinking."""

    def __init__(self, path: Path, text: str):
        super().__init__()
        self.edit = (path, text)

    def __call__(self, body: dict):
        if self.edit and body["messages"][0]["content"].startswith("You are a Wiki Maintainer Agent"):
            path, text = self.edit
            path.write_text(text)
            self.edit = None
        return super().__call__(body)


def test_a_step_never_overwrites_edits_made_during_the_run(ws):
    index = ws.root / "wiki/index.md"
    with pytest.raises(WorkspaceError, match="wiki/index.md has uncommitted edits that this step would overwrite"):
        evolve_scripted(ws, rounds=1, world=EditingWorld(index, "my index\n"))
    assert index.read_text() == "my index\n"
    assert first_parent_steps(ws.root) == [None, "baseline", "rollout"]  # the maintain step was not published
    evolve_scripted(ws, rounds=1, commit_human_edits=True)
    assert first_parent_steps(ws.root) == [None, "baseline", "rollout", "human", "maintain", "gate"]
    assert git(ws.root, "show", "main~2:wiki/index.md") == "my index\n"


def test_edits_made_between_rounds_are_committed_before_the_next_round(ws):
    result = evolve_scripted(
        ws, rounds=2, world=EditingWorld(ws.root / "wiki/patterns/mine.md", "mine\n"), commit_human_edits=True
    )
    assert result.rounds_completed == 2
    steps = first_parent_steps(ws.root)
    assert steps[steps.index("gate") + 1] == "human"  # first thing in round 2
    assert git(ws.root, "show", "main:wiki/patterns/mine.md") == "mine\n"
