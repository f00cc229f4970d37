"""The pre-flight gathers every problem of a run's settings into one error, before anything runs."""

from cli_errors import one_error_line, run
from conftest import git
from wikiskill import api
from workspaces import edit_config, merge_skill


def test_every_problem_of_a_run_is_named_in_one_line_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ws = api.init_workspace(tmp_path / "ws", benchmark="example-qa", model="openai/gpt-4o-mini")
    edit_config(ws, **{"agent.runner": "python:no_such_module_here:play"})
    git(ws.root, "commit", "-qam", "a runner that cannot be imported")
    head = git(ws.root, "rev-parse", "HEAD")

    line = one_error_line(run("-C", str(ws.root), "evolve", "--rounds", "1"))

    assert "agent.runner: cannot load python:no_such_module_here:play" in line
    assert "needs OPENAI_API_KEY" in line
    assert line.index("agent.runner") < line.index("OPENAI_API_KEY")  # in the order they are checked
    assert git(ws.root, "rev-parse", "HEAD") == head and not (ws.root / "raw" / "r001").exists()


def test_an_estimate_needs_no_key(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ws = api.init_workspace(tmp_path / "ws", benchmark="example-qa", model="openai/gpt-4o-mini")
    assert api.estimate(ws).rounds[0].round == 1


def test_an_audit_without_rerun_reads_git_with_no_key_while_a_rerun_needs_one(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ws = api.init_workspace(tmp_path / "ws", benchmark="example-qa", model="openai/gpt-4o-mini")
    merge_skill(ws, "spell-letters", 1)
    report = api.audit(ws)
    assert len(report.merges) == 1 and report.rerun == 0
    assert report.problems  # hand-made: the merge claims no evaluation
    assert "needs OPENAI_API_KEY" in one_error_line(run("-C", str(ws.root), "audit", "--rerun"))


def test_an_agent_the_team_cannot_build_is_named_with_the_other_problems_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ws = api.init_workspace(tmp_path / "ws", benchmark="example-qa", model="openai/gpt-4o-mini")
    edit_config(ws, **{"agent.model": "offline"})  # no offline agent answers questions
    git(ws.root, "commit", "-qam", "the task agent on the offline model")
    head = git(ws.root, "rev-parse", "HEAD")

    line = one_error_line(run("-C", str(ws.root), "eval", "--split", "val"))

    assert "the offline model cannot play example-qa" in line
    assert "needs OPENAI_API_KEY" in line  # the maintainer's and the proposer's model
    assert git(ws.root, "rev-parse", "HEAD") == head and not (ws.root / ".wikiskill" / "results").exists()
