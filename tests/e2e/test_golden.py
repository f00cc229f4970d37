"""Every later wikiskill reads a workspace that trailer schema 1 wrote.

tests/golden/workspace-v1.bundle was made by tests/golden/make_golden.py (its docstring lists the
rounds). A fresh clone of it must read back the same rounds, decisions, scores and incumbent through
every command, and a resumed `evolve` must add a round on top without re-running an old one. Only
what the workspace's history says is asserted, never commit dates or commit ids."""

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import git
from scripted import USELESS, ScriptedWorld, create
from wikiskill import api
from wikiskill.cli import app
from wikiskill.store.trailers import Decision, Step
from wikiskill.store.workspace import MAIN, Workspace
from wikiskill.testing.fakeserver import FakeOpenAIServer

GOLDEN = Path(__file__).parents[1] / "golden" / "workspace-v1.bundle"
ROUNDS = [
    (1, "create", "spell-letters", Decision.ACCEPTED),
    (2, "create", "useless-hint", Decision.REJECTED),
    (2, "rollback", "spell-letters", Decision.ROLLED_BACK),
    (3, "create", "spell-letters", Decision.ACCEPTED),
    (4, "no_action", "", Decision.NO_ACTION),
]
"""(round, action, skill, decision) of each row `wikiskill log` shows for the golden workspace."""


@pytest.fixture()
def golden(tmp_path) -> Path:
    """A fresh clone of the golden workspace, as a person would check it out."""
    ws = tmp_path / "golden"
    subprocess.run(["git", "clone", "-q", str(GOLDEN), str(ws)], check=True)
    return ws


def wikiskill(ws: Path, *args: str) -> str:
    result = CliRunner().invoke(app, ["-C", str(ws), *args], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def every_commit(ws: Path) -> list:
    """Each commit reachable from main or a tag, once."""
    workspace = Workspace(ws)
    commits = {
        commit.sha: commit
        for ref in ["main", *workspace.refs("refs/tags/")]
        for commit in workspace.log(ref, first_parent=False)
    }
    return list(commits.values())


def test_the_golden_bundle_is_small():
    assert GOLDEN.stat().st_size < 1_000_000


def test_every_commit_of_the_golden_workspace_reads_with_every_step_and_decision_it_wrote(golden):
    commits = every_commit(golden)
    metas = [commit.meta for commit in commits]
    assert {meta.step for meta in metas} == {
        None,
        Step.BASELINE,
        Step.ROLLOUT,
        Step.MAINTAIN,
        Step.CONSOLIDATE,
        Step.PROPOSE,
        Step.VALIDATE,
        Step.GATE,
        Step.ROLLBACK,
        Step.HUMAN,
        Step.INGEST,
    }
    assert {meta.decision for meta in metas} == {
        None,
        Decision.ACCEPTED,
        Decision.REJECTED,
        Decision.ROLLED_BACK,
        Decision.NO_ACTION,
    }
    assert {meta.schema_version for meta in metas} == {1}
    evaluations = [meta for meta in metas if meta.step in (Step.BASELINE, Step.VALIDATE)]
    assert len(evaluations) == 4  # the baseline and three validations
    assert all(
        meta.score is not None and meta.fingerprint and meta.setup and meta.skills_id and meta.results
        for meta in evaluations
    )
    assert all(commit.trailers.get("Wikiskill-Schema") == "1" for commit in commits if commit.meta.step)


def test_status_log_show_and_skills_read_the_golden_workspace(golden):
    ws = Workspace(golden)
    status = api.status(ws)
    assert (status.rounds, status.skills, round(status.incumbent, 3)) == (4, ["spell-letters"], 0.833)
    assert status.wiki_pages >= 1
    rows = api.round_log(ws)
    assert [(row.round, row.action, row.skill, row.decision) for row in rows] == [
        (number, action, skill, decision.value) for number, action, skill, decision in ROUNDS
    ]
    assert [round(row.val, 3) for row in rows if row.action == "create"] == [0.833, 0.833, 0.833]
    assert [round(row.incumbent, 3) for row in rows if row.action == "create"] == [0.5, 0.833, 0.5]

    out = wikiskill(golden, "status")
    assert "4 completed" in out and "0.833" in out and "spell-letters" in out
    out = wikiskill(golden, "log")
    firsts = [
        line.split()[0] for line in out.splitlines() if line.split()[:1] in (["001"], ["002"], ["003"], ["004"], ["—"])
    ]
    assert firsts == ["001", "002", "—", "003", "004"]  # round 2's accepted skill rolled back, a row of its own
    for decision in ("accepted", "rejected", "rolled_back", "no_action"):
        assert decision in out
    assert "decision: accepted (0.833 vs incumbent 0.500)" in wikiskill(golden, "show", "1")
    second = wikiskill(golden, "show", "2")
    assert "proposal: create useless-hint" in second and "decision: rejected (0.833 vs incumbent 0.833)" in second
    third = wikiskill(golden, "show", "3")
    assert "proposal: create spell-letters" in third and "decision: accepted (0.833 vs incumbent 0.500)" in third
    assert "decision: no_action" in wikiskill(golden, "show", "4")
    assert "spell-letters" in wikiskill(golden, "skills")


def test_audit_finds_every_merge_of_the_golden_workspace_sound(golden):
    assert "2 accepted merge(s) audited: every one is sound" in wikiskill(golden, "audit")


def test_compare_reads_the_golden_workspaces_evaluations(golden):
    with FakeOpenAIServer(ScriptedWorld()) as server:  # used only if this version's fingerprint differs
        out = wikiskill(golden, "compare", "baseline", "main", "--api-base", server.base_url)
    assert "baseline 0.500 → main 0.833" in out and "2 fixed, 0 broken" in out


def test_a_resumed_evolve_adds_a_round_to_the_golden_workspace_and_keeps_its_incumbent(golden):
    before = {
        tag: git(golden, "rev-parse", tag).strip()
        for tag in ("baseline", "round/001", "round/002", "round/003", "round/004")
    }
    old = {commit.sha for commit in every_commit(golden)}
    with FakeOpenAIServer(ScriptedWorld({5: create("useless-hint-again", USELESS)})) as server:
        wikiskill(golden, "evolve", "--rounds", "1", "--api-base", server.base_url)

    assert {tag: git(golden, "rev-parse", tag).strip() for tag in before} == before
    workspace = Workspace(golden)
    new = [commit for commit in workspace.log(MAIN) if commit.sha not in old]
    assert {commit.meta.round for commit in new} == {5}  # no old round ran again
    gate = next(commit.meta for commit in new if commit.meta.step == Step.GATE)
    assert (gate.decision, gate.skill, round(gate.incumbent, 3)) == (Decision.REJECTED, "useless-hint-again", 0.833)
    # main's incumbent is the evaluation round 3's merge recorded: re-validated once if, and only
    # if, this version evaluates under another setup (e.g. its task agent's code changed)
    incumbent = next(
        commit.meta for commit in workspace.log(MAIN) if commit.meta.round == 3 and commit.meta.step == Step.GATE
    )
    validation = workspace.log("rejected/r005-useless-hint-again")[0].meta
    revalidated = [commit.meta for commit in new if commit.meta.step == Step.INCUMBENT]
    assert len(revalidated) == (validation.setup != incumbent.setup)
    assert all(round(meta.score, 3) == 0.833 for meta in revalidated)
    if not revalidated:
        assert gate.incumbent_fingerprint == incumbent.fingerprint
    assert git(golden, "rev-parse", "round/005").strip()
    assert git(golden, "status", "--porcelain") == ""

    status = api.status(Workspace(golden))
    assert (status.rounds, status.skills, round(status.incumbent, 3)) == (5, ["spell-letters"], 0.833)
    assert "2 accepted merge(s) audited: every one is sound" in wikiskill(golden, "audit")
    assert "decision: rejected (0.833 vs incumbent 0.833)" in wikiskill(golden, "show", "5")
