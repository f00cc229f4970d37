"""A workspace's suite read on its own: a suite of containers with the tasks it leaves out and why,
none for any other suite."""

from harborsuites import harbor_suite, idle_engine, init_harbor
from wikiskill import api
from workspaces import new_workspace


def test_a_workspace_of_a_suite_without_containers_has_no_suite_of_containers(tmp_path):
    assert api.harbor_suite(new_workspace(tmp_path)) is None


def test_a_harbor_workspaces_suite_has_its_readable_tasks_and_says_why_the_others_are_left_out(tmp_path, monkeypatch):
    idle_engine(tmp_path / "bin", monkeypatch)
    suite = harbor_suite(tmp_path)
    assert init_harbor(tmp_path / "ws", suite).exit_code == 0
    (suite / "rev-dog" / "instruction.md").unlink()
    read = api.harbor_suite(api.open_workspace(tmp_path / "ws"))
    assert read is not None and sorted(read.by_id) == ["rev-cat", "rev-emu", "rev-owl"]
    assert "rev-dog" in read.unreadable and "instruction.md is missing" in read.unreadable["rev-dog"]
