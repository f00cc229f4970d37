"""The statistics of `gate.cost` on hostile inputs: costs that never vary, that are all equal,
that are missing, zero or unreadable."""

import json
import math

import pytest

from wikiskill.core.config import CostRule, GateSettings
from wikiskill.loop.cost_gate import check_cost, weigh_cost
from wikiskill.loop.gate_policies import PairedPolicy, StrictPolicy, gate_policy
from wikiskill.store.evaluations import Evaluation, read_outcomes
from wikiskill.store.trailers import Decision


def evaluation(scores: list[float], tokens: list[float] | None = None, tree: str = "t") -> Evaluation:
    ids = [f"task-{i:02d}" for i in range(len(scores))]
    costs = {} if tokens is None else dict(zip(ids, tokens, strict=True))
    return Evaluation(f"fp-{tree}", "setup", tree, dict(zip(ids, scores, strict=True)), tokens=costs)


def tiebreak(policy: str = "paired", **settings) -> GateSettings:
    return GateSettings(policy=policy, cost=CostRule.TIEBREAK, **settings)


def judged(settings: GateSettings, candidate: Evaluation, incumbent: Evaluation):
    verdict = gate_policy(settings).judge(candidate, incumbent)
    return weigh_cost(settings, verdict, candidate, incumbent)


def test_costs_halved_on_every_task_without_any_variance_are_shown_lower_on_six_tasks():
    verdict = judged(tiebreak(), evaluation([1, 0] * 3, [50] * 6), evaluation([1, 0] * 3, [100] * 6))
    assert verdict.decision == Decision.ACCEPTED
    assert verdict.evidence.cost.p_value == pytest.approx(1 / 64) and verdict.evidence.cost.ratio == 0.5


def test_four_tasks_cannot_show_a_cost_cut_at_the_split_level_however_large():
    verdict = judged(tiebreak(), evaluation([1, 0] * 2, [1] * 4), evaluation([1, 0] * 2, [100] * 4))
    assert verdict.decision == Decision.REJECTED and verdict.evidence.cost.p_value == pytest.approx(1 / 16)
    assert "no cost tiebreak: its cost is tokens per task 1 vs main 100" in verdict.reason


def test_equal_costs_show_nothing_cheaper_and_stay_within_a_bound():
    same = evaluation([1, 0, 1, 0, 1, 0, 1, 0], [120, 80, 100, 90, 110, 95, 105, 85])
    check = check_cost(tiebreak(cost_margin=0.0), same, same)
    assert check.p_value == 1.0 and not check.passed and check.ratio == 1.0
    assert check_cost(GateSettings(cost=CostRule.BOUND), same, same).passed


def test_a_missing_cost_shows_nothing_and_a_bound_rejects_the_gain_it_cannot_price():
    better, main = evaluation([1] * 8), evaluation([0] * 8)
    settings = GateSettings(policy="strict", cost=CostRule.BOUND)
    verdict = weigh_cost(settings, StrictPolicy().judge(better, main), better, main)
    assert verdict.decision == Decision.REJECTED and verdict.evidence.cost.n == 0
    assert "on 0 task(s)" in verdict.reason
    cheaper_but_unpriced = judged(tiebreak(), evaluation([1, 0] * 4), evaluation([1, 0] * 4, [100] * 8))
    assert cheaper_but_unpriced.decision == Decision.REJECTED


def test_zero_costs_on_both_sides_have_a_ratio_of_one_and_a_new_cost_over_zero_is_infinite():
    zero = evaluation([1, 0] * 4, [0] * 8)
    assert check_cost(tiebreak(), zero, zero).ratio == 1.0
    assert math.isinf(check_cost(tiebreak(), evaluation([1, 0] * 4, [5] * 8), zero).ratio)


def test_a_cheaper_candidate_that_may_be_worse_is_not_merged_on_cost():
    candidate = evaluation([1, 1, 1, 1, 1, 0, 0, 0], [10] * 8)
    main = evaluation([1, 1, 1, 1, 1, 1, 0, 0], [100] * 8)
    verdict = judged(tiebreak(), candidate, main)
    assert verdict.decision == Decision.REJECTED
    assert "score gain's lower bound -0.1250 at 0.975 is not above -0.02" in verdict.reason
    strict = judged(tiebreak("strict"), candidate, main)
    assert strict.decision == Decision.REJECTED and "needs equal means" in strict.reason


def test_the_non_inferiority_bound_is_computed_at_the_split_level_not_the_gates():
    # 22 tasks, 1 fixed and 2 broken: the exact bound of the sign test is about -0.1341 at 0.975
    # (half of the 0.05 significance level) and -0.1317 at 0.95; a margin between them decides
    candidate = evaluation([1] * 16 + [1, 0, 0, 1, 1, 0], [50] * 22)
    main = evaluation([1] * 16 + [0, 1, 1, 1, 1, 0], [100] * 22)
    verdict = judged(tiebreak(noninferiority=0.133), candidate, main)
    assert verdict.evidence.cost.floor == pytest.approx(-0.1340717, abs=1e-6)
    assert verdict.decision == Decision.REJECTED and verdict.evidence.cost.passed
    assert judged(tiebreak(noninferiority=0.135), candidate, main).decision == Decision.ACCEPTED


def test_tiebreak_runs_the_policy_at_half_the_significance_level():
    assert gate_policy(tiebreak(confidence=0.9)).confidence == pytest.approx(0.95)
    assert gate_policy(GateSettings(policy="paired", cost=CostRule.BOUND)).confidence == 0.95
    assert isinstance(gate_policy(tiebreak()), PairedPolicy)


def test_an_outcomes_file_gives_no_cost_for_a_value_that_is_missing_negative_or_not_a_number():
    rows = [
        {"id": "a", "score": 1.0, "tokens": 12, "cost": 0.5},
        {"id": "b", "score": 1.0, "tokens": None, "cost": "cheap"},
        {"id": "c", "score": 0.0, "tokens": -3, "cost": True},
        {"id": "d", "score": 0.0},
        {"id": "e", "score": None, "failure": "infra", "tokens": 9, "cost": 0.1},
    ]
    text = "".join(json.dumps(row) + "\n" for row in rows) + '{"id": "f", "score": 0.0, "tokens": NaN}\n'
    outcomes = read_outcomes(text)
    assert outcomes.tokens == {"a": 12.0} and outcomes.usd == {"a": 0.5}
    assert set(outcomes.scores) == {"a", "b", "c", "d", "f"}
