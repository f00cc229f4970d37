"""Gate policies on per-task scores: what each accepts, and the evidence it records."""

import math

import pytest

from wikiskill.core.config import GateSettings
from wikiskill.core.errors import WikiskillError
from wikiskill.store.evaluations import Evaluation
from wikiskill.loop.gate_policies import RETIRE, PairedPolicy, StrictPolicy, gate_policy, mean_interval
from wikiskill.loop.impact import ImpactEntry
from wikiskill.store.trailers import Decision


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
    assert RETIRE == "retire"


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
    better = evaluation([s + 0.2 for s in incumbent.scores.values()][:5] + [s + 0.25 for s in incumbent.scores.values()][5:])
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


def test_confirm_policy_asks_for_a_second_evaluation():
    assert gate_policy(GateSettings(policy="confirm")).confirms
    assert not gate_policy(GateSettings()).confirms


def test_evaluations_of_different_tasks_cannot_be_compared():
    with pytest.raises(WikiskillError, match="same tasks"):
        StrictPolicy().judge(evaluation([1, 1]), evaluation([1, 1, 1]))


def test_a_constant_difference_has_a_point_interval():
    assert mean_interval([0.5, 0.5, 0.5], 0.95) == (0.5, 0.5)
    assert mean_interval([0.5, 0.5], 0.95, one_sided=True) == (0.5, math.inf)


def test_impact_entry_holds_the_decision_and_its_evidence():
    verdict = PairedPolicy(0.95, 0.0).judge(evaluation([1, 0, 1]), evaluation([0, 0, 1]))
    entry = ImpactEntry(3, "patch", "break-loop", verdict.decision, verdict.reason, "loops cost steps",
                        "tag rejected/r003-break-loop (abc)", 0.667, 0.333, verdict.evidence,
                        "+- Avoid `go *`.\n").render()
    assert entry.startswith("## r003 · patch · break-loop · REJECTED")
    for part in ("- Candidate score: 0.667", "- Incumbent score: 0.333", "- Rationale: loops cost steps",
                 "- Policy: paired (n = 3 tasks", "- p-value: 0.5000", "- Fixed: 1 (task-00)", "- Broken: 0",
                 "tag rejected/r003-break-loop", "```diff\n+- Avoid `go *`.\n```"):
        assert part in entry
