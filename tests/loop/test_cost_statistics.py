"""The statistics of `gate.cost`: the limits, levels and seeds its tests run at, and hostile
inputs: costs that never vary, that are all equal, that are missing, zero or unreadable."""

import json
import math

import pytest

from wikiskill.loop.cost_gate import below_p_value, check_cost, weigh_cost
from wikiskill.loop.gate_policies import PairedPolicy, StrictPolicy, gain_floor, gate_policy, paired, sign_flip_p
from wikiskill.loop.settings import CostRule, CostUnit, GateSettings
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


def test_tiebreak_tests_the_cost_below_one_less_the_margin_and_bound_below_one_more_the_increase():
    main = evaluation([1, 0] * 4, [100] * 8)
    slightly_cheaper = check_cost(tiebreak(cost_margin=0.1), evaluation([1, 0] * 4, [95] * 8), main)
    assert slightly_cheaper.limit == pytest.approx(0.9) and slightly_cheaper.p_value == 1.0
    assert not slightly_cheaper.passed  # 5% cheaper is not 10% cheaper
    costlier = check_cost(
        GateSettings(cost=CostRule.BOUND, max_cost_increase=0.1), evaluation([1, 0] * 4, [150] * 8), main
    )
    assert costlier.limit == pytest.approx(1.1) and not costlier.passed  # 50% more is over a 10% bound
    assert check_cost(GateSettings(cost=CostRule.BOUND), evaluation([1, 0] * 4, [105] * 8), main).passed


def test_a_cost_in_usd_is_read_from_each_sides_priced_costs_not_its_tokens():
    ids = [f"task-{i:02d}" for i in range(6)]
    candidate = Evaluation(
        "fp-c", "setup", "c", dict.fromkeys(ids, 1.0), tokens=dict.fromkeys(ids, 100.0), usd=dict.fromkeys(ids, 0.5)
    )
    main = Evaluation(
        "fp-m", "setup", "m", dict.fromkeys(ids, 1.0), tokens=dict.fromkeys(ids, 50.0), usd=dict.fromkeys(ids, 1.0)
    )
    check = check_cost(tiebreak(cost_unit=CostUnit.USD), candidate, main)
    assert (check.unit, check.n, check.candidate, check.incumbent, check.passed) == (CostUnit.USD, 6, 0.5, 1.0, True)
    assert (check_cost(tiebreak(), candidate, main).candidate, check_cost(tiebreak(), candidate, main).incumbent) == (
        100.0,
        50.0,
    )


def test_the_cost_test_and_the_non_inferiority_bound_run_at_the_gates_seed():
    # 20 tasks: too many for an exact sign-flip test, so its p-value and the bootstrap bound depend on the seed
    tokens = [100 - 7 * (i % 5) + (9 if i % 3 == 0 else -4) for i in range(20)]
    candidate = evaluation([0.5 + 0.025 * (i % 7) for i in range(20)], tokens)
    main = evaluation([0.5 + 0.02 * (i % 5) for i in range(20)], [100] * 20)
    excess = [c - 0.9 * 100 for c in tokens]
    pairs = [(f"task-{i:02d}", float(c), 100.0) for i, c in enumerate(tokens)]
    assert below_p_value(pairs, 0.9) == sign_flip_p(excess, "less", 0)  # seed 0 unless given
    floors = {seed: gain_floor(paired(candidate, main), 0.975, seed) for seed in (0, 7)}
    assert sign_flip_p(excess, "less", 7) != sign_flip_p(excess, "less", 0) and floors[7] != floors[0]
    for _ in range(2):
        verdict = judged(tiebreak(seed=7), candidate, main)
        assert verdict.evidence.cost.p_value == sign_flip_p(excess, "less", 7)
        assert verdict.evidence.cost.floor == floors[7]


def test_no_task_costed_on_both_sides_gives_mean_costs_of_zero():
    check = check_cost(tiebreak(), evaluation([1, 0] * 4), evaluation([1, 0] * 4, [100] * 8))
    assert (check.n, check.candidate, check.incumbent, check.p_value, check.passed) == (0, 0.0, 0.0, 1.0, False)


def test_a_cost_p_value_equal_to_the_significance_level_is_not_shown():
    # four tasks all far cheaper: the exact sign-flip p is 1/16, exactly 1 - 0.9375
    check = check_cost(
        GateSettings(cost=CostRule.BOUND, confidence=0.9375),
        evaluation([1] * 4, [1] * 4),
        evaluation([1] * 4, [100] * 4),
    )
    assert (check.p_value, check.confidence, check.passed) == (0.0625, 0.9375, False)


def test_only_tiebreak_records_a_non_inferiority_margin():
    same = evaluation([1, 0] * 4, [100] * 8)
    assert check_cost(tiebreak(noninferiority=0.05), same, same).noninferiority == 0.05
    assert check_cost(GateSettings(cost=CostRule.BOUND, noninferiority=0.05), same, same).noninferiority == 0.0


def test_no_regression_breaks_a_tie_on_cost_only_when_it_loses_no_more_tasks_than_allowed():
    # one task fixed and one broken: equal means, one task main solved is lost
    candidate = evaluation([1, 0, 1, 1, 0, 0], [50] * 6)
    main = evaluation([0, 1, 1, 1, 0, 0], [100] * 6)
    strict = judged(tiebreak("no_regression", max_broken=0), candidate, main)
    assert strict.decision == Decision.REJECTED and not strict.evidence.cost.decided
    assert strict.reason.endswith("no cost tiebreak: 1 task(s) main solved are lost (at most 0)")
    lenient = judged(tiebreak("no_regression", max_broken=1), candidate, main)
    assert lenient.decision == Decision.ACCEPTED and lenient.evidence.cost.decided
    assert judged(tiebreak("strict"), candidate, main).decision == Decision.ACCEPTED  # strict counts no losses


def test_a_score_floor_equal_to_minus_the_non_inferiority_margin_is_not_above_it():
    same = evaluation([1, 0] * 4, [100] * 8)
    cheaper = evaluation([1, 0] * 4, [50] * 8)
    verdict = judged(tiebreak(noninferiority=0.0), cheaper, same)  # equal scores: a floor of exactly 0
    assert verdict.decision == Decision.REJECTED and verdict.evidence.cost.floor == 0.0
    assert verdict.reason.endswith("no cost tiebreak: score gain's lower bound +0.0000 at 0.975 is not above -0")
    assert judged(tiebreak(noninferiority=0.01), cheaper, same).decision == Decision.ACCEPTED


def test_each_turn_of_the_verdict_by_cost_says_why_in_full():
    main, same_cheaper = evaluation([1, 0] * 3, [100] * 6), evaluation([1, 0] * 3, [50] * 6)
    tokens = "tokens per task 50 vs main 100 on 6 task(s), ratio 0.500: shown below 0.900 at 0.975 (sign-flip p=0.0156)"
    paired = judged(tiebreak(), same_cheaper, main)
    assert paired.reason.endswith(f"; accepted as cheaper: score gain >= +0.0000 > -0.02 at 0.975, {tokens}")
    strict = judged(tiebreak("strict"), same_cheaper, main)
    assert (
        strict.reason
        == f"val 0.500 = incumbent 0.500 (needs a strict improvement); accepted as cheaper: equal means, {tokens}"
    )
    assert (strict.decision, strict.evidence.cost.decided, strict.evidence.policy) == (
        Decision.ACCEPTED,
        True,
        "strict",
    )
    costlier = evaluation([1, 0] * 3, [100] * 6)
    refused = judged(tiebreak("strict"), costlier, main)
    assert refused.reason.endswith(
        "; no cost tiebreak: its cost is tokens per task 100 vs main 100 on 6 task(s), "
        "ratio 1.000: not shown below 0.900 at 0.975 (sign-flip p=1.0000)"
    )
    better, dearer = evaluation([1] * 6, [300] * 6), evaluation([0] * 6, [100] * 6)
    bound = GateSettings(policy="strict", cost=CostRule.BOUND)
    rejected = weigh_cost(bound, StrictPolicy().judge(better, dearer), better, dearer)
    assert rejected.reason == (
        "val 1.000 > incumbent 0.000; but its cost is tokens per task 300 vs main 100 on 6 task(s), ratio 3.000: "
        "not shown below 1.100 at 0.95 (sign-flip p=1.0000)"
    )
    assert (rejected.decision, rejected.evidence.cost.decided) == (Decision.REJECTED, True)
    kept = weigh_cost(bound, StrictPolicy().judge(better, better), better, better)
    assert (kept.decision, kept.reason, kept.evidence.cost.decided) == (
        Decision.REJECTED,
        "val 1.000 = incumbent 1.000 (needs a strict improvement)",
        False,
    )
    verdict = StrictPolicy().judge(better, dearer)
    assert weigh_cost(GateSettings(policy="strict"), verdict, better, dearer) is verdict
