"""`gate.alpha_budget`: one family-wise error for the whole run, each verdict at its share of it
(the online fallback rule), recorded on the gate commits and replayed by `audit`."""

import re
import shutil
from pathlib import Path

import pytest
import yaml

from inprocess import evolve_scripted
from scripted import DEFAULT_PROPOSALS, USELESS, ScriptedWorld, create, reversal_suite
from wikiskill import api
from wikiskill.core.errors import ConfigError
from wikiskill.loop.alpha_budget import next_spend
from wikiskill.loop.settings import GateSettings
from wikiskill.store.rounds import round_state
from wikiskill.store.trailers import Decision, format_message
from wikiskill.store.workspace import Workspace
from workspaces import UNUSED_SERVER


def test_twenty_verdicts_that_merge_nothing_spend_at_most_the_budget():
    before: list[tuple[float, bool]] = []
    for _ in range(200):
        spend = next_spend(0.05, 20, before)
        before.append((spend.alpha, False))
    assert sum(alpha for alpha, _ in before[:20]) == pytest.approx(0.045)
    assert sum(alpha for alpha, _ in before) <= 0.05 + 1e-12
    assert spend.spent + spend.left == pytest.approx(0.05)


def test_a_merge_passes_its_level_on_to_the_next_verdict():
    first = next_spend(0.05, 20, [])
    assert next_spend(0.05, 20, [(first.alpha, True)]).alpha == pytest.approx(2 * first.alpha)
    assert next_spend(0.05, 20, [(first.alpha, False)]).alpha == pytest.approx(first.alpha)


def test_past_the_first_rounds_each_verdict_spends_half_the_share_of_the_one_before_it():
    before: list[tuple[float, bool]] = []
    spends = []
    for _ in range(4):
        spends.append(next_spend(0.05, 2, before))
        before.append((spends[-1].alpha, False))
    assert [spend.number for spend in spends] == [1, 2, 3, 4]
    assert [spend.alpha for spend in spends] == pytest.approx([0.0225, 0.0225, 0.0025, 0.00125])
    assert spends[-1].spent == pytest.approx(0.04875) and spends[-1].left == pytest.approx(0.00125)


def test_a_budget_for_a_policy_without_a_level_is_refused():
    with pytest.raises(ValueError, match="alpha_budget needs a policy with a confidence level"):
        GateSettings(policy="strict", alpha_budget=0.05)


def budgeted_workspace(root: Path) -> Workspace:
    suite = reversal_suite(root / "suite", 40)
    ws = api.init_workspace(
        root / "ws", benchmark=f"jsonl:{suite}", model="openai/scripted", api_base=UNUSED_SERVER, concurrency=4
    )
    config = yaml.safe_load((ws.root / "wikiskill.yaml").read_text())
    config["gate"] = {"policy": "sequential", "batch": 10, "alpha_budget": 0.05, "alpha_rounds": 20}
    (ws.root / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    return ws


@pytest.fixture(scope="module")
def evolved(tmp_path_factory):
    """Round 1 merges spell-letters, rounds 2 and 3 reject a useless hint each."""
    ws = budgeted_workspace(tmp_path_factory.mktemp("budget"))
    world = ScriptedWorld({**DEFAULT_PROPOSALS, 3: create("another-hint", USELESS)})
    assert evolve_scripted(ws, rounds=3, world=world).decisions == ["accepted", "rejected", "rejected"]
    return ws


def test_each_gate_commit_records_what_it_spent_and_what_is_left(evolved):
    first, second = round_state(evolved, 1).gate.meta, round_state(evolved, 2).gate.meta
    assert (first.alpha, first.alpha_spent, first.alpha_left) == pytest.approx((0.00225, 0.00225, 0.04775))
    assert first.confidence == pytest.approx(1 - 0.00225)  # the looks ran at the verdict's share
    assert (second.alpha, second.alpha_spent, second.alpha_left) == pytest.approx((0.0045, 0.0045, 0.0455))
    assert api.status(evolved).alpha_left == pytest.approx(0.04325)


def test_after_a_rejection_the_next_verdict_runs_at_its_own_level_not_at_what_was_spent(evolved):
    third = round_state(evolved, 3).gate.meta
    assert (third.alpha, third.alpha_spent) == pytest.approx((0.00225, 0.00675))
    assert third.confidence == pytest.approx(1 - 0.00225)


def forged_verdict(tmp_path, ws, decision: Decision = Decision.REJECTED, **trailers: object):
    """A copy of `ws` with a round 4 gate commit on main: round 3's trailers with `trailers` instead."""
    shutil.copytree(ws.root, tmp_path / "forged", symlinks=True)
    copy = api.open_workspace(tmp_path / "forged")
    meta = round_state(copy, 3).gate.meta.model_copy(update={"round": 4, "decision": decision, **trailers})
    copy.commit({}, format_message(f"r4 gate: {decision.value} nothing", meta))
    return [problem for problem in api.audit(copy).problems if problem.startswith("alpha budget: round 4")]


FOURTH = {"alpha": 0.00225, "alpha_spent": 0.009, "alpha_left": 0.041}
"""What the rule gives round 4's verdict, after a rejection."""


def test_audit_replays_the_budget_and_flags_a_verdict_that_took_more_than_its_share(tmp_path, evolved):
    assert api.audit(evolved).problems == []
    (problem,) = forged_verdict(tmp_path, evolved, alpha=0.04, alpha_spent=0.04, alpha_left=0.01)
    assert re.match(r"alpha budget: round 4 \([0-9a-f]{10}\): records alpha 0\.040000 ", problem)
    assert "gives 0.002250" in problem


def test_audit_replays_the_budget_its_trailers_record_once_the_settings_no_longer_name_one(tmp_path, evolved):
    shutil.copytree(evolved.root, tmp_path / "copy", symlinks=True)
    config = yaml.safe_load((tmp_path / "copy" / "wikiskill.yaml").read_text())
    del config["gate"]["alpha_budget"]
    (tmp_path / "copy" / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    problems = api.audit(api.open_workspace(tmp_path / "copy")).problems
    assert [problem for problem in problems if problem.startswith("alpha budget")] == []


def test_audit_names_a_forged_alpha_spent_when_it_alone_is_wrong(tmp_path, evolved):
    assert forged_verdict(tmp_path / "true", evolved, **FOURTH) == []
    (problem,) = forged_verdict(tmp_path / "forged", evolved, **{**FOURTH, "alpha_spent": 0.00225})
    assert "records alpha 0.002250 (spent 0.002250)" in problem and "(spent 0.009000)" in problem


def test_audit_names_a_forged_alpha_when_it_alone_is_wrong(tmp_path, evolved):
    (problem,) = forged_verdict(tmp_path, evolved, **{**FOURTH, "alpha": 0.04})
    assert "records alpha 0.040000 (spent 0.009000)" in problem and "gives 0.002250 (spent 0.009000)" in problem


def test_audit_reads_a_verdict_without_its_alpha_spent_as_spending_nothing(tmp_path, evolved):
    (problem,) = forged_verdict(tmp_path, evolved, **{**FOURTH, "alpha_spent": None})
    assert "records alpha 0.002250 (spent 0.000000)" in problem


def test_a_rejected_verdict_is_not_held_to_a_merge_s_level(tmp_path, evolved):
    assert forged_verdict(tmp_path, evolved, Decision.REJECTED, **FOURTH, confidence=0.95) == []


def test_audit_names_both_a_merge_s_forged_alpha_and_its_loose_confidence(tmp_path, evolved):
    forged, loose = forged_verdict(tmp_path, evolved, Decision.ACCEPTED, **{**FOURTH, "alpha": 0.04}, confidence=0.95)
    assert "records alpha 0.040000" in forged and loose.endswith(
        "merged at confidence 0.95, below its budget's 0.99775"
    )


def test_audit_names_a_merge_whose_confidence_is_below_one_minus_its_alpha(tmp_path, evolved):
    sound = forged_verdict(tmp_path / "sound", evolved, Decision.ACCEPTED, **FOURTH, confidence=1 - 0.00225)
    assert sound == []
    (problem,) = forged_verdict(tmp_path / "loose", evolved, Decision.ACCEPTED, **FOURTH, confidence=0.95)
    assert problem.endswith("merged at confidence 0.95, below its budget's 0.99775")


def test_audit_names_a_fixed_n_merge_whose_p_value_is_not_below_its_alpha(tmp_path, evolved):
    alpha = next_spend(0.05, 20, [(0.00225, True), (0.0045, False), (0.00225, False)]).alpha
    fixed = {**FOURTH, "alpha": alpha, "look": None, "confidence": None}
    assert forged_verdict(tmp_path / "below", evolved, Decision.ACCEPTED, **fixed, p_value=alpha / 2) == []
    (problem,) = forged_verdict(tmp_path / "at", evolved, Decision.ACCEPTED, **fixed, p_value=alpha)
    assert problem.endswith(f"merged with p={alpha:.4f}, not below its level 0.002250")


def test_a_budget_on_strict_stops_the_command_in_one_line(tmp_path):
    ws = budgeted_workspace(tmp_path)
    config = yaml.safe_load((ws.root / "wikiskill.yaml").read_text())
    config["gate"]["policy"] = "strict"
    (ws.root / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError, match="gate.alpha_budget needs a policy with a confidence level"):
        api.status(ws)
