"""A gain whose skill the agent never loaded: the real Qwen Code CLI, against the scripted server,
answers better once the proposed skill is listed without ever calling its `skill` tool. The gate
flags the merge `never loaded` (its commit and the report), and with `gate.require_load` refuses it."""

import pytest

from conftest import needs_cli
from qwen_world import QwenCodeWorld, tiny_workspace
from scripted import SPELL, create
from wikiskill import api
from wikiskill.history.htmlreport import report_data
from wikiskill.roles.coding_agents.qwen_code import QwenCode
from wikiskill.store.trailers import Decision, SkillLoading, Step
from wikiskill.testing.fakeserver import FakeOpenAIServer
from workspaces import edit_config

pytestmark = [needs_cli(QwenCode), pytest.mark.slow]


def evolve_one_round(tmp_path, world: QwenCodeWorld, require_load: bool):
    with FakeOpenAIServer(world) as server:
        ws = tiny_workspace(tmp_path, server)
        edit_config(ws, **{"proposer.min_trace_reads": 2, "gate.require_load": require_load})
        api.evolve(ws, 1)
    gate = next(commit for commit in ws.log("main") if commit.meta.step == Step.GATE)
    return ws, gate


def silent_world() -> QwenCodeWorld:
    return QwenCodeWorld(silent=True, proposals={1: create("spell-letters", SPELL)}, trace_ids=["train-00", "train-01"])


def test_a_gain_whose_new_skill_was_never_loaded_is_merged_flagged_never_loaded(tmp_path):
    ws, gate = evolve_one_round(tmp_path, silent_world(), require_load=False)
    meta = gate.meta
    assert meta.decision == Decision.ACCEPTED and (meta.score, meta.incumbent) == pytest.approx((2 / 3, 1 / 3))
    assert (meta.skill_loading, meta.skill_loads, meta.skill_runs) == (SkillLoading.ON_DEMAND, 0, 3)
    assert meta.never_loaded is True
    assert "Never loaded: spell-letters was loaded in none of 3 validation runs" in ws.body(gate.sha)
    assert "Never loaded" in api.show_round(ws, 1).reason
    impact = ws.read_file("main", "wiki/skill-impact.md")  # what the proposer reads of past rounds
    assert "- Note: Never loaded: spell-letters was loaded in none of 3 validation runs" in impact
    (row,) = report_data(ws).costs
    assert row.decision_text == "accepted (never loaded)"


def test_with_gate_require_load_a_gain_whose_new_skill_was_never_loaded_is_rejected(tmp_path):
    ws, gate = evolve_one_round(tmp_path, silent_world(), require_load=True)
    meta = gate.meta
    assert meta.decision == Decision.REJECTED and meta.score == pytest.approx(2 / 3)
    assert meta.never_loaded is True
    reason = "never loaded: spell-letters was loaded in none of 3 validation runs (gate.require_load)"
    assert reason in f"{gate.subject} {ws.body(gate.sha)}".replace("\n", " ")
    assert api.load_skills(ws) == []  # main kept no skill
