"""`audit` names the `skill/` branch of a round its gate already decided, and the next `evolve`
deletes it as it starts (the kill that leaves one is tests/e2e/test_kill_gate.py's)."""

from conftest import git
from inprocess import evolve_scripted, scripted_workspace
from wikiskill import api


def test_a_decided_rounds_branch_is_named_by_audit_and_deleted_by_the_next_evolve(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    evolve_scripted(ws, rounds=2)
    rejected = git(ws.root, "rev-parse", "rejected/r002-useless-hint").strip()
    git(ws.root, "update-ref", "refs/heads/skill/r002-useless-hint", rejected)  # what a kill left
    assert api.audit(ws).problems == [
        "branch skill/r002-useless-hint is left over: round 2's gate decided it; the next `wikiskill evolve` deletes it"
    ]
    evolve_scripted(ws, rounds=1)
    assert git(ws.root, "for-each-ref", "refs/heads/skill/") == ""
    assert api.audit(ws).problems == []
