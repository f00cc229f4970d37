"""Gate policies on per-task scores: what each accepts, and the evidence it records."""

import json
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wikiskill.contracts.gate import ValidationPlan
from wikiskill.core.errors import WikiskillError
from wikiskill.loop.gate_policies import (
    ConfirmPolicy,
    NoRegressionPolicy,
    PairedPolicy,
    StrictPolicy,
    gain_floor,
    gate_policy,
    infra_problem,
    left_out,
    mean_interval,
    sign_flip_p,
)
from wikiskill.loop.impact import ImpactEntry
from wikiskill.loop.settings import GateSettings
from wikiskill.store.evaluations import Evaluation, read_scores
from wikiskill.store.trailers import Action, Decision


def evaluation(scores: list[float], tree: str = "t") -> Evaluation:
    return Evaluation(f"fp-{tree}", "setup", tree, {f"task-{i:02d}": s for i, s in enumerate(scores)})


def test_strict_accepts_only_a_strictly_greater_mean():
    strict = StrictPolicy()
    assert strict.judge(evaluation([1, 1, 0]), evaluation([1, 0, 0])).decision == Decision.ACCEPTED
    tie = strict.judge(evaluation([0, 1, 0]), evaluation([1, 0, 0]))
    assert tie.decision == Decision.REJECTED and "needs a strict improvement" in tie.reason
    assert strict.judge(evaluation([0, 0, 0]), evaluation([1, 0, 0])).decision == Decision.REJECTED


def test_a_retire_passes_at_an_equal_score_but_not_below():
    strict = StrictPolicy()
    assert strict.judge(evaluation([0, 1]), evaluation([1, 0]), at_least=True).decision == Decision.ACCEPTED
    assert strict.judge(evaluation([0, 0]), evaluation([1, 0]), at_least=True).decision == Decision.REJECTED
    assert Action.RETIRE == "retire"


def test_strict_calls_a_permutation_of_the_incumbents_scores_a_tie():
    shuffled, incumbent = evaluation([0.3, 0.2, 0.1]), evaluation([0.1, 0.2, 0.3])
    for candidate, against in ((shuffled, incumbent), (incumbent, shuffled)):
        verdict = StrictPolicy().judge(candidate, against)
        assert verdict.decision == Decision.REJECTED
        assert verdict.reason == "val 0.200 = incumbent 0.200 (needs a strict improvement)"
        assert StrictPolicy().judge(candidate, against, at_least=True).decision == Decision.ACCEPTED  # a retire


def test_strict_calls_equal_decimal_sums_a_tie_though_their_float_sums_differ():
    candidate, incumbent = evaluation([0.1, 0.2, 0.4]), evaluation([0.1, 0.3, 0.3])  # 0.7000000000000001 vs 0.7
    verdict = StrictPolicy().judge(candidate, incumbent)
    assert verdict.decision == Decision.REJECTED and verdict.evidence.mean_diff == 0.0
    assert verdict.reason == "val 0.233 = incumbent 0.233 (needs a strict improvement)"
    assert StrictPolicy().judge(incumbent, candidate, at_least=True).decision == Decision.ACCEPTED


def test_strict_shows_a_real_gain_that_rounding_to_three_places_hides():
    verdict = StrictPolicy().judge(evaluation([0.3, 0.2, 0.1000003]), evaluation([0.1, 0.2, 0.3]))
    assert verdict.decision == Decision.ACCEPTED
    assert verdict.reason == "val 0.200 > incumbent 0.200 (mean difference +1e-07)"


scores = st.lists(st.floats(0, 1, allow_subnormal=False), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(scores, st.randoms(use_true_random=False))
def test_no_policy_accepts_the_incumbents_scores_in_another_order_but_a_retire_may_pass_on_them(values, random):
    shuffled, incumbent = evaluation(random.sample(values, len(values))), evaluation(values)
    for policy in (
        StrictPolicy(),
        NoRegressionPolicy(len(values)),
        PairedPolicy(0.95, 0.0),
        gate_policy(GateSettings(policy="confirm")),
    ):
        assert policy.judge(shuffled, incumbent).decision == Decision.REJECTED
        assert policy.judge(shuffled, incumbent, at_least=True).decision == Decision.ACCEPTED


MILLIONTHS = 10**6  # the outcomes files write scores to 6 decimal places


@st.composite
def equal_sums(draw) -> tuple[list[float], list[float]]:
    """Two score lists (tenths) with the same decimal sum: the second moves some score between tasks."""
    tenths = draw(st.lists(st.integers(0, 10), min_size=2, max_size=12))
    give, take = draw(st.permutations(range(len(tenths))))[:2]
    moved = draw(st.integers(0, min(tenths[give], 10 - tenths[take])))
    other = list(tenths)
    other[give] -= moved
    other[take] += moved
    return [t / 10 for t in tenths], [t / 10 for t in other]


@settings(max_examples=200, deadline=None)
@given(equal_sums())
def test_strict_never_accepts_a_candidate_whose_decimal_scores_sum_to_the_incumbents(lists):
    candidate, incumbent = evaluation(lists[0]), evaluation(lists[1])
    assert StrictPolicy().judge(candidate, incumbent).decision == Decision.REJECTED
    assert StrictPolicy().judge(candidate, incumbent, at_least=True).decision == Decision.ACCEPTED


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, MILLIONTHS), st.integers(0, MILLIONTHS)), min_size=1, max_size=12))
def test_strict_accepts_exactly_when_the_decimal_scores_sum_to_a_gain(pairs):
    candidate = evaluation([c / MILLIONTHS for c, _ in pairs])
    incumbent = evaluation([i / MILLIONTHS for _, i in pairs])
    exact = sum(c - i for c, i in pairs)
    forward, backward = StrictPolicy().judge(candidate, incumbent), StrictPolicy().judge(incumbent, candidate)
    assert (forward.decision == Decision.ACCEPTED) == (exact > 0)
    assert (backward.decision == Decision.ACCEPTED) == (exact < 0)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_paired_answers_a_handful_of_graded_tasks_with_a_rejection_that_says_why(n):
    verdict = PairedPolicy(0.95, 0.0).judge(evaluation([0.9] * n), evaluation([0.4] * n))
    assert verdict.decision == Decision.REJECTED
    assert f"{n} of {n} task(s) differ from a gain of 0: too few to show a gain above it at 0.95" in verdict.reason
    assert f"p cannot go below {0.5**n:.4f}" in verdict.reason
    assert PairedPolicy(0.95, 0.0).judge(evaluation([0.9] * 5), evaluation([0.4] * 5)).decision == Decision.ACCEPTED


def test_paired_margin_bounds_the_interval_on_pass_fail_scores_as_on_graded_ones():
    pass_fail = (evaluation([1] * 10 + [0] * 10), evaluation([0] * 20))  # a gain of 0.5: surely above 0.2, not 0.3
    graded = (evaluation([0.5] * 5 + [0.6] * 5), evaluation([0.0] * 10))  # 0.55: surely above 0.4, not 0.53
    for (candidate, incumbent), below, above in ((pass_fail, 0.2, 0.3), (graded, 0.4, 0.53)):
        sure, unsure = (PairedPolicy(0.95, margin).judge(candidate, incumbent) for margin in (below, above))
        assert (sure.decision, unsure.decision) == (Decision.ACCEPTED, Decision.REJECTED)
        assert unsure.evidence.mean_diff > above  # the point estimate clears the margin; the bound does not
        assert below < sure.evidence.interval[0] == unsure.evidence.interval[0] < above
        assert f"(needs the lower bound above {above:g} and p < 0.05)" in unsure.reason


@pytest.mark.parametrize("score", [math.nan, math.inf, -math.inf])
def test_an_evaluation_refuses_a_score_that_is_not_a_finite_number(score):
    outcomes = "".join(
        json.dumps({"id": task, "score": value}) + "\n" for task, value in (("val-00", 1.0), ("val-01", score))
    )
    with pytest.raises(WikiskillError, match=r"^1 task\(s\) scored no finite number \(val-01: (nan|inf|-inf)\)"):
        Evaluation("fp", "setup", "t", read_scores(outcomes))


def test_evidence_names_the_fixed_and_broken_tasks():
    verdict = StrictPolicy().judge(evaluation([1, 0, 1, 1]), evaluation([0, 1, 1, 0]))
    assert verdict.evidence.fixed == ["task-00", "task-03"]
    assert verdict.evidence.broken == ["task-01"]
    assert verdict.evidence.n == 4 and verdict.evidence.mean_diff == pytest.approx(0.25)


def test_paired_rejects_a_small_gain_that_strict_accepts():
    incumbent = evaluation([0] * 9 + [1] * 9)
    candidate = evaluation([1] + [0] * 8 + [1] * 9)  # one more task solved out of 18
    assert StrictPolicy().judge(candidate, incumbent).decision == Decision.ACCEPTED
    verdict = PairedPolicy(0.95, 0.0).judge(candidate, incumbent)
    assert verdict.decision == Decision.REJECTED
    assert verdict.evidence.p_value == pytest.approx(0.5)  # one discordant task: a coin toss


def test_paired_accepts_a_consistent_gain_on_pass_fail_scores():
    incumbent = evaluation([0] * 10 + [1] * 8)
    candidate = evaluation([1] * 8 + [0] * 2 + [1] * 8)  # 8 fixed, none broken: p = 1/256
    verdict = PairedPolicy(0.95, 0.0).judge(candidate, incumbent)
    assert verdict.decision == Decision.ACCEPTED
    assert verdict.evidence.p_value == pytest.approx(1 / 256)


def test_paired_margin_demands_a_gain_above_it():
    incumbent = evaluation([0] * 10 + [1] * 8)
    candidate = evaluation([1] * 8 + [0] * 2 + [1] * 8)  # +0.444
    assert PairedPolicy(0.95, 0.5).judge(candidate, incumbent).decision == Decision.REJECTED


def test_paired_bootstrap_on_graded_scores_reports_a_one_sided_interval():
    incumbent = evaluation([0.2, 0.4, 0.5, 0.3, 0.1, 0.6, 0.4, 0.2, 0.5, 0.3])
    better = evaluation(
        [s + 0.2 for s in incumbent.scores.values()][:5] + [s + 0.25 for s in incumbent.scores.values()][5:]
    )
    verdict = PairedPolicy(0.95, 0.0, seed=1).judge(better, incumbent)
    assert verdict.decision == Decision.ACCEPTED
    low, high = verdict.evidence.interval
    assert 0 < low <= verdict.evidence.mean_diff and math.isinf(high)
    noisy = evaluation([0.3, 0.3, 0.5, 0.2, 0.2, 0.6, 0.3, 0.3, 0.4, 0.4])
    assert PairedPolicy(0.95, 0.0, seed=1).judge(noisy, incumbent).decision == Decision.REJECTED


def test_no_regression_refuses_a_gain_that_breaks_too_many_solved_tasks():
    incumbent = evaluation([1, 1, 0, 0, 0])
    candidate = evaluation([0, 1, 1, 1, 0])
    policy = gate_policy(GateSettings(policy="no_regression", max_broken=0))
    verdict = policy.judge(candidate, incumbent)
    assert verdict.decision == Decision.REJECTED and "task-00" in verdict.reason
    lenient = gate_policy(GateSettings(policy="no_regression", max_broken=1))
    assert lenient.judge(candidate, incumbent).decision == Decision.ACCEPTED


def test_no_regression_names_the_first_five_tasks_it_would_lose_and_records_its_evidence():
    incumbent = evaluation([1] * 5 + [0] * 7)
    candidate = evaluation([0] * 5 + [1] * 7)
    verdict = NoRegressionPolicy(0).judge(candidate, incumbent)
    assert verdict.decision == Decision.REJECTED and verdict.evidence.policy == "no_regression"
    assert verdict.reason == (
        "val 0.583 > incumbent 0.417, but 5 task(s) main solved are lost (at most 0): "
        "task-00, task-01, task-02, task-03, task-04"
    )
    six = NoRegressionPolicy(0).judge(evaluation([0] * 6 + [1] * 8), evaluation([1] * 6 + [0] * 8))
    assert six.reason.endswith(": task-00, task-01, task-02, task-03, task-04 …")
    lenient = NoRegressionPolicy(5).judge(candidate, incumbent)
    assert (lenient.decision, lenient.reason) == (Decision.ACCEPTED, "val 0.583 > incumbent 0.417")
    assert lenient.evidence.broken == ["task-00", "task-01", "task-02", "task-03", "task-04"]


def test_a_paired_verdict_on_graded_scores_of_many_tasks_is_the_same_each_time_it_is_judged():
    # 16 tasks: the sign-flip test samples 9,999 of 65,536 sign patterns, from the gate's seed
    incumbent = evaluation([0.1 * (i % 7) for i in range(16)])
    candidate = evaluation([0.1 * (i % 7) + (0.15 if i % 3 else -0.1) for i in range(16)])
    first, again = (PairedPolicy(0.95, 0.0, seed=7).judge(candidate, incumbent) for _ in range(2))
    assert first.evidence.p_value == again.evidence.p_value and first.reason == again.reason
    diffs = [c - i for c, i in zip(candidate.scores.values(), incumbent.scores.values(), strict=True)]
    assert first.evidence.p_value == sign_flip_p(diffs, "greater", 7) != sign_flip_p(diffs, "greater", 0)
    assert first.evidence.interval == (pytest.approx(mean_interval(diffs, 0.95, 7, one_sided=True)[0]), math.inf)


def test_paired_tests_graded_gains_against_the_margin_and_says_when_too_few_tasks_differ():
    incumbent = evaluation([0.5] * 10)
    gains = [0.3, 0.25, 0.1, 0.05, 0.3, 0.2, 0.15, 0.35, 0.05, 0.25]
    candidate = evaluation([0.5 + gain for gain in gains])
    verdict = PairedPolicy(0.95, 0.1, seed=1).judge(candidate, incumbent)
    assert verdict.evidence.p_value == pytest.approx(sign_flip_p([gain - 0.1 for gain in gains], "greater", 1))
    assert verdict.evidence.p_value > 2**-10  # not every gain is above the margin
    # 4 tasks differ: the sign-flip test's p cannot go below 2^-4, which is 1 - 0.9375
    few = PairedPolicy(0.9375, 0.0).judge(evaluation([0.5] * 6 + [0.7] * 4), evaluation([0.5] * 10))
    assert few.decision == Decision.REJECTED and "too few to show a gain above it at 0.9375" in few.reason
    assert (few.evidence.policy, few.evidence.confidence) == ("paired", 0.9375)


def test_confirm_policy_asks_for_a_second_evaluation_and_sequential_for_looks():
    assert gate_policy(GateSettings(policy="confirm")).plan() == ValidationPlan(confirms=True)
    assert gate_policy(GateSettings()).plan() == ValidationPlan()
    sequential = gate_policy(GateSettings(policy="sequential"))
    assert sequential.plan().looks is sequential and not sequential.plan().confirms


def test_evaluations_of_different_tasks_cannot_be_compared():
    with pytest.raises(WikiskillError, match="same tasks"):
        StrictPolicy().judge(evaluation([1, 1]), evaluation([1, 1, 1]))


def test_a_constant_difference_has_a_point_interval():
    assert mean_interval([0.5, 0.5, 0.5], 0.95) == (0.5, 0.5)
    assert mean_interval([0.5, 0.5], 0.95, one_sided=True) == (0.5, math.inf)
    assert mean_interval([0.25], 0.95) == (0.25, 0.25) and mean_interval([0.25], 0.95, one_sided=True) == (
        0.25,
        math.inf,
    )


def test_impact_entry_holds_the_decision_and_its_evidence():
    verdict = PairedPolicy(0.95, 0.0).judge(evaluation([1, 0, 1]), evaluation([0, 0, 1]))
    entry = ImpactEntry(
        3,
        "patch",
        "break-loop",
        verdict.decision,
        verdict.reason,
        "loops cost steps",
        "tag rejected/r003-break-loop (abc)",
        0.667,
        0.333,
        verdict.evidence,
        "+- Avoid `go *`.\n",
    ).render()
    assert entry.startswith("## r003 · patch · break-loop · REJECTED")
    for part in (
        "- Candidate score: 0.667",
        "- Incumbent score: 0.333",
        "- Rationale: loops cost steps",
        "- Policy: paired (n = 3 tasks",
        "- p-value: 0.5000",
        "- Effect: helped 1 val task(s) (1 newly solved), hurt 0 (0 no longer solved)",
        "- Helped: task-00 (newly solved)",
        "tag rejected/r003-break-loop",
        "```diff\n+- Avoid `go *`.\n```",
    ):
        assert part in entry


def test_partial_gains_are_counted_as_helped_even_when_no_task_becomes_solved():
    verdict = StrictPolicy().judge(evaluation([0.6, 0.4, 1.0, 0.3, 0.7]), evaluation([0.5, 0.5, 1.0, 0.1, 0.6]))
    evidence = verdict.evidence
    assert (evidence.fixed, evidence.broken) == ([], [])
    assert (evidence.helped, evidence.hurt) == (["task-00", "task-03", "task-04"], ["task-01"])
    effect = "helped 3 val task(s) (0 newly solved), hurt 1 (0 no longer solved)"
    assert evidence.effect() == effect
    entry = ImpactEntry(4, "patch", "x", verdict.decision, verdict.reason, evidence=evidence).render()
    assert f"- Effect: {effect}\n- Helped: task-00, task-03, task-04\n- Hurt: task-01\n" in entry


def with_infra(scores: dict[str, float], infra: dict[str, str], tree: str = "t") -> Evaluation:
    return Evaluation(f"fp-{tree}", "setup", tree, scores, infra=infra)


def test_a_task_failing_as_infrastructure_on_both_sides_names_both_reasons():
    candidate = with_infra({"a": 1.0}, {"b": "the check crashed"}, "c")
    main = with_infra({"a": 0.0}, {"b": "no reward"}, "m")
    assert left_out(candidate, main) == {"b": "candidate: the check crashed; main: no reward"}


def test_one_evaluations_infrastructure_failures_are_named_without_a_side():
    alone = with_infra({"a": 1.0, "c": 0.0}, {"b": "the check crashed", "d": "no reward"})
    assert left_out(alone) == {"b": "the check crashed", "d": "no reward"}
    assert infra_problem(GateSettings(max_infra_share=0.4), alone) == (
        "2 of 4 tasks failed as infrastructure, more than gate.max_infra_share 0.4 (b: the check crashed; d: no reward)"
    )
    assert infra_problem(GateSettings(max_infra_share=0.5), alone) is None  # 2 of 4 is not more than half
    assert infra_problem(GateSettings(max_infra_share=0.0), Evaluation("fp", "setup", "t", {})) is None


def test_a_stopping_message_names_ten_infrastructure_failures_and_counts_the_rest():
    failures = {f"t{n:02d}": f"crash {n}" for n in range(12)}
    problem = infra_problem(GateSettings(), with_infra({"ok": 1.0}, failures))
    named = "; ".join(f"t{n:02d}: crash {n}" for n in range(10))
    assert (
        problem == f"12 of 13 tasks failed as infrastructure, more than gate.max_infra_share 0.1 ({named}; and 2 more)"
    )
    ten = infra_problem(GateSettings(), with_infra({"ok": 1.0}, dict(list(failures.items())[:10])))
    assert ten.endswith("t09: crash 9)")  # no "and 0 more"
    eleven = infra_problem(GateSettings(), with_infra({"ok": 1.0}, dict(list(failures.items())[:11])))
    assert eleven.endswith("t09: crash 9; and 1 more)")


def test_a_reason_is_cut_to_300_characters_with_an_ellipsis():
    long, exact = "x" * 400, "y" * 300
    problem = infra_problem(GateSettings(), with_infra({}, {"a": long, "b": exact}))
    assert problem.endswith(f"(a: {'x' * 297}...; b: {exact})")


def test_evidence_of_compares_only_the_tasks_scored_on_both_sides():
    candidate = with_infra({"a": 1.0, "c": 0.5}, {"b": "crashed"}, "c")
    main = with_infra({"a": 0.0, "b": 1.0, "c": 0.5}, {}, "m")
    evidence = StrictPolicy().judge(candidate, main).evidence
    assert (evidence.policy, evidence.n, evidence.candidate, evidence.incumbent) == ("strict", 2, 0.75, 0.25)
    assert (evidence.gain, evidence.fixed, evidence.helped, evidence.hurt) == (Fraction(1, 2), ["a"], ["a"], [])
    one = StrictPolicy().judge(with_infra({"a": 1.0}, {}), with_infra({"a": 0.25}, {})).evidence
    assert (one.n, one.gain) == (1, Fraction(3, 4))
    nothing = StrictPolicy().judge(with_infra({}, {"a": "crashed"}), with_infra({"a": 1.0}, {})).evidence
    assert (nothing.n, nothing.candidate, nothing.incumbent, nothing.gain) == (0, 0.0, 0.0, 0)


def test_a_task_solved_on_both_sides_is_neither_fixed_broken_helped_nor_hurt():
    evidence = StrictPolicy().judge(evaluation([1.0, 1.0, 0.0]), evaluation([1.0, 0.5, 0.0])).evidence
    assert (evidence.fixed, evidence.broken, evidence.helped, evidence.hurt) == (["task-01"], [], ["task-01"], [])
    back = StrictPolicy().judge(evaluation([1.0, 0.5, 0.0]), evaluation([1.0, 1.0, 0.0])).evidence
    assert (back.fixed, back.broken, back.helped, back.hurt) == ([], ["task-01"], [], ["task-01"])


def test_strict_says_what_a_loss_needed():
    loss = StrictPolicy().judge(evaluation([0, 0, 0]), evaluation([1, 0, 0]))
    assert loss.reason == "val 0.000 < incumbent 0.333 (needs a strict improvement)"
    retire = StrictPolicy().judge(evaluation([0, 0, 0]), evaluation([1, 0, 0]), at_least=True)
    assert (retire.decision, retire.reason) == (
        Decision.REJECTED,
        "val 0.000 < incumbent 0.333 (needs at least the incumbent)",
    )
    hidden = StrictPolicy().judge(evaluation([0.1, 0.2, 0.2999997]), evaluation([0.1, 0.2, 0.3]))
    assert hidden.reason == "val 0.200 < incumbent 0.200 (mean difference -1e-07) (needs a strict improvement)"
    assert ConfirmPolicy().judge(evaluation([1]), evaluation([0])).evidence.policy == "confirm"


def test_paired_needs_a_p_value_below_its_level_not_equal_to_it():
    # the sign-flip test of these 5 differences gives exactly 2/32, which is 1 - 0.9375
    verdict = PairedPolicy(0.9375, 0.0).judge(evaluation([1, 1, 1, 1, 0.9]), evaluation([0.5, 0.5, 0.5, 0.5, 1.0]))
    assert (verdict.decision, verdict.evidence.p_value, verdict.evidence.interval) == (
        Decision.REJECTED,
        0.0625,
        (pytest.approx(0.14), math.inf),
    )
    assert verdict.reason == (
        "val 0.980 vs incumbent 0.600: mean difference +0.3800, [+0.1400, +inf) at 0.9375, sign-flip p=0.0625 "
        "(needs the lower bound above 0 and p < 0.0625)"
    )


def test_paired_states_its_sign_test_and_its_bootstrap_in_full():
    accepted = PairedPolicy(0.95, 0.0).judge(evaluation([1] * 8 + [0] * 2 + [1] * 8), evaluation([0] * 10 + [1] * 8))
    assert accepted.reason == (
        "val 0.889 vs incumbent 0.444: 8 fixed, 0 broken, gain [+0.1668, +inf) at 0.95, sign test p=0.0039: above 0"
    )
    assert (accepted.evidence.confidence, accepted.evidence.interval[1]) == (0.95, math.inf)
    tie = PairedPolicy(0.95, 0.0).judge(evaluation([1, 0, 1, 0]), evaluation([0, 1, 1, 0]))
    assert tie.reason == (
        "val 0.500 vs incumbent 0.500: 1 fixed, 1 broken, gain [-0.4747, +inf) at 0.95, sign test p=0.7500 "
        "(needs the lower bound above 0 and p < 0.05)"
    )
    same = PairedPolicy(0.95, 0.0).judge(evaluation([1, 0, 1]), evaluation([1, 0, 1]))
    assert (same.decision, same.evidence.p_value, same.evidence.interval[0]) == (Decision.REJECTED, 1.0, 0.0)
    incumbent = evaluation([0.2, 0.4, 0.5, 0.3, 0.1, 0.6, 0.4, 0.2, 0.5, 0.3])
    graded = PairedPolicy(0.95, 0.0, seed=1).judge(
        evaluation([0.4, 0.6, 0.7, 0.5, 0.3, 0.85, 0.65, 0.4, 0.75, 0.55]), incumbent
    )
    assert graded.reason == (
        "val 0.570 vs incumbent 0.350: mean difference +0.2200, [+0.2100, +inf) at 0.95, sign-flip p=0.0010: above 0"
    )


def test_the_bootstrap_and_sign_flip_figures_are_those_of_their_fixed_resampling():
    diffs = [0.1, 0.3, 0.2, 0.5, 0.4, -0.2]
    assert mean_interval(diffs, 0.9, 0, one_sided=True) == (pytest.approx(0.0666666666667), math.inf)
    assert mean_interval(diffs, 0.9, 0) == (pytest.approx(0.0333333333333), pytest.approx(0.35))
    assert mean_interval([], 0.9) == (-math.inf, math.inf)
    # 16 tasks: 9,999 sign patterns drawn from seed 0
    assert sign_flip_p([0.1 * (i % 5) - 0.15 for i in range(16)], "greater", 0) == pytest.approx(0.1825)
    assert sign_flip_p([0.1 * (i % 5) - 0.15 for i in range(16)], "greater") == pytest.approx(0.1825)  # seed 0


def test_the_gain_floor_is_the_sign_tests_bound_on_pass_fail_scores_and_the_bootstraps_otherwise():
    assert gain_floor([], 0.95) == -math.inf
    two_broken = [(f"t{i}", 0.0, 1.0 if i < 2 else 0.0) for i in range(10)]
    assert gain_floor(two_broken, 0.95) == -0.2  # no task fixed: the bound is every discordant task lost
    graded = [("a", 1.0, 0.5), ("b", 0.5, 0.0), ("c", 1.0, 0.0), ("d", 0.0, 0.0), ("e", 0.75, 0.5)]
    assert gain_floor(graded, 0.9, 3) == mean_interval([0.5, 0.5, 1.0, 0.0, 0.25], 0.9, 3, one_sided=True)[0] == 0.3


def test_the_bootstrap_bound_of_paired_is_drawn_from_the_policys_seed():
    gains = [0.12, 0.31, -0.05, 0.27, 0.08, 0.19, 0.44, -0.11, 0.23, 0.16, 0.35, 0.02]
    incumbent = evaluation([0.5] * 12)
    candidate = evaluation([0.5 + gain for gain in gains])
    bounds = {seed: mean_interval(gains, 0.95, seed, one_sided=True)[0] for seed in (0, 5)}
    assert bounds[0] != bounds[5] and mean_interval(gains, 0.95, one_sided=True)[0] == bounds[0]
    pairs = [(f"task-{i:02d}", 0.5 + gain, 0.5) for i, gain in enumerate(gains)]
    assert gain_floor(pairs, 0.95) == pytest.approx(bounds[0], abs=1e-12)  # seed 0 unless given
    verdict = PairedPolicy(0.95, 0.0, seed=5).judge(candidate, incumbent)
    assert verdict.evidence.interval == (pytest.approx(bounds[5], abs=1e-12), math.inf)
    assert (verdict.evidence.policy, verdict.evidence.confidence) == ("paired", 0.95)


def test_a_bound_the_bootstrap_cannot_estimate_is_infinite():
    tiny = [1e-300, 2e-300, 3e-300]  # the BCa acceleration underflows: scipy gives no finite bound
    assert mean_interval(tiny, 0.95) == (-math.inf, math.inf)
    assert mean_interval(tiny, 0.95, one_sided=True) == (-math.inf, math.inf)


def test_paired_is_built_from_the_gates_confidence_margin_and_seed():
    policy = gate_policy(GateSettings(policy="paired", confidence=0.9, margin=0.1, seed=5))
    assert (policy.confidence, policy.margin, policy.seed) == (0.9, 0.1, 5)


def test_paired_tests_the_discordant_tasks_against_the_share_the_margin_needs():
    candidate, incumbent = evaluation([1] * 10 + [0] * 10), evaluation([0] * 20)
    # a gain above 0.3 on 20 tasks with 10 discordant needs each to be fixed with chance above 0.8
    verdict = PairedPolicy(0.95, 0.3).judge(candidate, incumbent)
    assert verdict.evidence.p_value == pytest.approx(0.8**10)
    retire = PairedPolicy(0.95, 0.0).judge(candidate, incumbent, at_least=True)
    assert (retire.decision, retire.evidence.policy) == (Decision.ACCEPTED, "paired")
    assert PairedPolicy(0.95, 0.0).seed == 0
