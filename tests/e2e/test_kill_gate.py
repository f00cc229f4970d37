"""`kill -9` of a real `wikiskill evolve` at git calls of the gate and the round's end (a git shim
kills the run just before or just after the n-th call of a kind), then `wikiskill evolve` for the
rounds still missing: it exits 0 and ends as an uninterrupted plain `wikiskill evolve` (history,
decisions, tags, a clean tree, no marker, a sound audit). benchmarks/kill_gate.py tries every
such call; these are the ones that bricked the workspace before (the gate's ref move, the sync
after it) and the round's bookkeeping."""

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import kill_gate  # noqa: E402
import kill_resume  # noqa: E402
from wikiskill.cli import app  # noqa: E402
from wikiskill.testing.fakeserver import FakeOpenAIServer  # noqa: E402

pytestmark = pytest.mark.slow

POINTS = {  # (scenario, round, before/after, the call's key begins with)
    "after the accepting gate moves main": ("accept-reject", 1, "after", "update-ref refs/heads/main "),
    "before the accepting gate's working-tree sync": ("accept-reject", 1, "before", "read-tree --reset -u "),
    "after the accepted round's branch is deleted, before its tag": ("accept-reject", 1, "after", "update-ref -d "),
    "after the rejecting gate moves main": ("accept-reject", 2, "after", "update-ref refs/heads/main "),
    "after the gate that reaches 1.0 moves main": ("perfect", 1, "after", "update-ref refs/heads/main "),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Per scenario: its server and its uninterrupted reference; and the shimmed starter."""
    root = tmp_path_factory.mktemp("kill-gate")
    start = kill_gate.Starter(kill_gate.GitShim(root / "shim"), fork_server=True)
    scenarios = {}
    with FakeOpenAIServer(kill_gate.ScriptedWorld()) as plain, FakeOpenAIServer(kill_gate.PerfectWorld()) as perfect:
        for name, server in (("accept-reject", plain), ("perfect", perfect)):
            scenarios[name] = server, kill_gate.reference_run(server, root / name, start)
        yield scenarios, start


def point(reference: kill_gate.Reference, number: int, when: str, prefix: str) -> kill_gate.KillPoint:
    window = kill_gate.gate_windows(reference.calls)[number - 1]
    index = next(index for index in window if reference.calls[index].startswith(prefix))
    key = reference.calls[index]
    return kill_gate.KillPoint(when, reference.calls[: index + 1].count(key), key)


def test_the_references_reach_an_accepted_a_rejected_and_a_perfect_gate(runs):
    scenarios, _ = runs
    assert scenarios["accept-reject"][1].decisions == ["accepted", "rejected", "no_action"]
    assert scenarios["perfect"][1].decisions == ["accepted"]  # at val 1.000, which ends the run


@pytest.mark.parametrize("name", POINTS)
def test_evolve_for_the_rounds_left_finishes_a_run_killed_at_the_gate(runs, tmp_path, name):
    scenarios, start = runs
    scenario, number, when, prefix = POINTS[name]
    server, reference = scenarios[scenario]
    kill = point(reference, number, when, prefix)
    assert kill_gate.kill_and_resume(server, tmp_path / "ws", reference, kill, start) == []


def test_a_persons_file_in_raw_is_still_refused_after_a_kill_at_the_gate(runs, tmp_path):
    scenarios, start = runs
    server, reference = scenarios["accept-reject"]
    ws = kill_resume.new_workspace(tmp_path / "ws", server.base_url)
    start.shim.reset(point(reference, 1, "after", "update-ref refs/heads/main "))
    assert kill_resume.run_evolve(ws, start=start).exit_code == -9
    (ws / "raw/r001/mine.txt").write_text("a person's note\n")
    start.shim.reset()
    result = CliRunner().invoke(app, ["-C", str(ws), "evolve", "--rounds", "1"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "error: raw/ has uncommitted changes; it is written by wikiskill only "
        "(restore it with `git checkout -- raw && git clean -fd raw`)"
    )
    assert not (ws / ".wikiskill/sync.json").exists()  # the killed run's publish was finished all the same
    assert kill_resume.git(ws, "status", "--porcelain", "--untracked-files=all") == "?? raw/r001/mine.txt\n"


def test_a_decided_candidates_branch_left_by_a_kill_is_named_by_audit_and_gone_on_the_next_start(runs, tmp_path):
    """Killed once the rejecting gate's commit is on main, before its branch is deleted: `audit`
    names the branch, and the next `evolve` deletes it on starting, even one that then refuses to
    run (a person's uncommitted skill)."""
    scenarios, start = runs
    server, reference = scenarios["accept-reject"]
    ws = kill_resume.new_workspace(tmp_path / "ws", server.base_url)
    start.shim.reset(point(reference, 2, "after", "update-ref refs/heads/main "))
    assert kill_resume.run_evolve(ws, start=start).exit_code == -9
    start.shim.reset()
    skill_branches = ("for-each-ref", "--format=%(refname:short)", "refs/heads/skill/")
    assert kill_resume.git(ws, *skill_branches) == "skill/r002-useless-hint\n"
    audited = CliRunner().invoke(app, ["-C", str(ws), "audit"])
    assert audited.exit_code == 1
    assert (
        "branch skill/r002-useless-hint is left over: round 2's gate decided it; the next `wikiskill evolve` deletes it"
    ) in audited.output.splitlines()
    (ws / "skills/mine").mkdir()
    (ws / "skills/mine/SKILL.md").write_text("---\nname: mine\ndescription: a person's own\n---\n")
    refused = CliRunner().invoke(app, ["-C", str(ws), "evolve", "--rounds", "1"])
    assert refused.exit_code == 1 and "uncommitted edits in skills/mine/SKILL.md" in refused.output
    assert kill_resume.git(ws, *skill_branches) == ""
    assert kill_resume.git(ws, "tag", "--list", "rejected/*") == "rejected/r002-useless-hint\n"
