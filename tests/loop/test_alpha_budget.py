"""`gate.alpha_budget`: one family-wise error for the whole run, each verdict at its share of it
(the online fallback rule), recorded on the gate commits and replayed by `audit`."""

from pathlib import Path

import pytest
import yaml

from inprocess import evolve_scripted
from scripted import reversal_suite
from wikiskill import api
from wikiskill.core.config import GateSettings
from wikiskill.core.errors import ConfigError
from wikiskill.loop.alpha_budget import next_spend
from wikiskill.store.rounds import round_state
from wikiskill.store.trailers import format_message
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
    ws = budgeted_workspace(tmp_path_factory.mktemp("budget"))
    assert evolve_scripted(ws, rounds=2).decisions == ["accepted", "rejected"]
    return ws


def test_each_gate_commit_records_what_it_spent_and_what_is_left(evolved):
    first, second = round_state(evolved, 1).gate.meta, round_state(evolved, 2).gate.meta
    assert (first.alpha, first.alpha_spent, first.alpha_left) == pytest.approx((0.00225, 0.00225, 0.04775))
    assert first.confidence == pytest.approx(1 - 0.00225)  # the looks ran at the verdict's share
    assert (second.alpha, second.alpha_spent, second.alpha_left) == pytest.approx((0.0045, 0.0045, 0.0455))
    assert api.status(evolved).alpha_left == pytest.approx(0.0455)


def test_audit_replays_the_budget_and_flags_a_verdict_that_took_more_than_its_share(evolved):
    assert api.audit(evolved).problems == []
    gate = round_state(evolved, 2).gate
    greedy = gate.meta.model_copy(update={"round": 3, "alpha": 0.04, "alpha_spent": 0.04, "alpha_left": 0.01})
    evolved.commit({}, format_message("r3 gate: rejected nothing", greedy))
    problems = api.audit(evolved).problems
    assert any(
        "alpha budget: round 3" in p and "records alpha 0.040000" in p and "gives 0.002250" in p for p in problems
    )


def test_a_budget_on_strict_stops_the_command_in_one_line(tmp_path):
    ws = budgeted_workspace(tmp_path)
    config = yaml.safe_load((ws.root / "wikiskill.yaml").read_text())
    config["gate"]["policy"] = "strict"
    (ws.root / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError, match="gate.alpha_budget needs a policy with a confidence level"):
        api.status(ws)
