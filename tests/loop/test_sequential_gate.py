"""`gate.policy: sequential`: the looks on hand-made differences (accept early, reject for
futility, continue on a close call, `paired` at the pool's end), boundaries that spend no more
than alpha, and a real loop whose clear gain and useless change stop early, recorded in the
gate commit, the impact entry, `show` and `audit`."""

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import yaml

from inprocess import WorldModel, evolve_scripted
from scripted import ScriptedWorld, reversal_suite
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.core.errors import WikiskillError
from wikiskill.history.htmlreport import report_data
from wikiskill.loop.fingerprint import digest
from wikiskill.loop.gate_policies import PairedPolicy, gate_policy
from wikiskill.loop.sequential import SequentialPolicy, design, z_at_least
from wikiskill.loop.settings import GateSettings
from wikiskill.store.evaluations import Evaluation, evaluation_at, skills_id
from wikiskill.store.rounds import round_state
from wikiskill.store.trailers import Crossed, Decision, Step, Trailers, format_message
from wikiskill.store.workspace import MAIN, Workspace
from workspaces import UNUSED_SERVER


def pair(candidate: list[float], incumbent: list[float]) -> tuple[Evaluation, Evaluation]:
    ids = [f"task-{i:03d}" for i in range(len(candidate))]
    return (
        Evaluation("fp-c", "setup", "c", dict(zip(ids, candidate, strict=True))),
        Evaluation("fp-i", "setup", "i", dict(zip(ids, incumbent, strict=True))),
    )


POLICY = SequentialPolicy(confidence=0.95, margin=0.0, batch=10)


def test_the_sequential_policy_is_a_built_in_gate_policy():
    policy = gate_policy(GateSettings(policy="sequential", batch=7, confidence=0.9))
    assert isinstance(policy, SequentialPolicy) and (policy.batch, policy.confidence) == (7, 0.9)


def test_a_big_gain_is_accepted_at_an_early_look():
    candidate, incumbent = pair([1.0] * 200, [0.0] * 200)
    verdict = POLICY.judge_looks(candidate, incumbent, pool=200)
    look = verdict.evidence.look
    assert verdict.decision == Decision.ACCEPTED
    assert (look.number, look.looks, look.tasks, look.crossed) == (2, 20, 20, Crossed.EFFICACY)
    assert verdict.evidence.n == 20 and look.statistic == pytest.approx(math.sqrt(20)) and look.statistic >= look.upper
    assert "look 2 of 20, 20 of 200 tasks: z 4.472 >= efficacy bound" in verdict.reason


def test_a_loss_is_rejected_for_futility_before_the_pools_end():
    candidate, incumbent = pair([0.0] * 15 + [1.0] * 185, [1.0] * 200)  # 15 broken, then ties
    verdict = POLICY.judge_looks(candidate, incumbent, pool=200)
    look = verdict.evidence.look
    assert verdict.decision == Decision.REJECTED and look.crossed == Crossed.FUTILITY
    assert look.tasks == 20 and look.statistic < look.lower == look.boundary
    assert "< futility bound" in verdict.reason


def test_a_close_call_continues_to_the_next_batch():
    # 6 fixed and 4 broken in the first 30 tasks: no boundary is near
    candidate, incumbent = pair([1.0] * 6 + [0.0] * 4 + [0.5] * 20, [0.0] * 6 + [1.0] * 4 + [0.5] * 20)
    look = POLICY.look(candidate, incumbent, pool=200)
    assert (look.number, look.tasks, look.crossed) == (3, 30, None)
    assert look.lower < look.statistic < look.upper
    with pytest.raises(WikiskillError, match="stopped without a verdict"):
        POLICY.judge_looks(candidate, incumbent, pool=200)


def test_the_looks_follow_the_candidates_task_order_whatever_the_incumbents():
    candidate, incumbent = pair([1.0] * 20 + [0.0] * 20, [0.0] * 40)
    shuffled = Evaluation("fp-i", "setup", "i", dict(reversed(list(incumbent.scores.items()))))
    assert POLICY.judge_looks(candidate, shuffled, pool=40).evidence.look.tasks == 20


def test_a_number_of_tasks_between_looks_is_refused():
    candidate, incumbent = pair([1.0] * 15, [0.0] * 15)
    with pytest.raises(WikiskillError, match="15 of 200 validation tasks is no look of batch 10"):
        POLICY.look(candidate, incumbent, pool=200)


def batches(*counts: tuple[int, int]) -> tuple[Evaluation, Evaluation]:
    """Batches of 10 pass/fail tasks with (fixed, broken) each; the rest are ties."""
    candidate, incumbent = [], []
    for fixed, broken in counts:
        candidate += [1.0] * fixed + [0.0] * broken + [1.0] * (10 - fixed - broken)
        incumbent += [0.0] * fixed + [1.0] * broken + [1.0] * (10 - fixed - broken)
    return pair(candidate, incumbent)


def test_at_the_pools_end_the_verdict_is_paireds_at_the_level_the_looks_left():
    candidate, incumbent = batches((3, 1), (4, 1), (3, 2), (3, 1))  # 13 fixed, 5 broken: sign test p = 0.048
    verdict = POLICY.judge_looks(candidate, incumbent, pool=40)
    level = 1 - design(40, 10, 0.05).final_alpha
    at_level = PairedPolicy(level, 0.0).judge(candidate, incumbent)
    assert verdict.evidence.look.crossed == Crossed.POOL_END and verdict.evidence.n == 40
    assert (verdict.decision, verdict.evidence.p_value) == (at_level.decision, at_level.evidence.p_value)
    assert verdict.reason.startswith(at_level.reason) and f"paired at {level:.4f}" in verdict.reason
    # the looks spent some of the 5%: what fixed-n paired accepts at 0.95 is not enough here
    assert PairedPolicy(0.95, 0.0).judge(candidate, incumbent).decision == Decision.ACCEPTED
    assert verdict.decision == Decision.REJECTED and 0.95 < level < 0.96


def test_a_pool_of_one_batch_is_exactly_paired():
    candidate, incumbent = pair([1.0] * 6 + [0.0] * 2, [0.0] * 8)
    verdict = POLICY.judge_looks(candidate, incumbent, pool=8)
    paired = PairedPolicy(0.95, 0.0).judge(candidate, incumbent)
    assert (verdict.decision, verdict.evidence.p_value, verdict.evidence.look.looks) == (
        paired.decision,
        paired.evidence.p_value,
        1,
    )
    assert verdict.evidence.confidence == 0.95 and "paired at" not in verdict.reason


def test_a_retire_is_judged_on_the_whole_pool_as_at_least_the_incumbent():
    candidate, incumbent = pair([1.0] * 40, [1.0] * 40)
    assert POLICY.look(*pair([1.0] * 10, [1.0] * 10), pool=40, at_least=True).crossed is None
    assert POLICY.judge_looks(candidate, incumbent, pool=40, at_least=True).decision == Decision.ACCEPTED
    assert POLICY.judge_looks(candidate, incumbent, pool=40).decision == Decision.REJECTED


def test_z_is_compared_with_a_boundary_exactly():
    assert z_at_least(Fraction(3), Fraction(9), Fraction(1))  # z = 1 exactly
    assert not z_at_least(Fraction(3), Fraction(9) + Fraction(1, 10**9), Fraction(1))
    assert z_at_least(Fraction(-1), Fraction(4), Fraction(-1, 2)) and not z_at_least(Fraction(-1), Fraction(1), 0)
    assert z_at_least(Fraction(0), Fraction(0), Fraction(0)) and not z_at_least(Fraction(0), Fraction(0), Fraction(1))


def test_the_boundaries_spend_at_most_alpha_over_all_looks_on_a_brownian_motion():
    plan = design(200, 10, 0.05)
    steps = np.random.default_rng(0).standard_normal((40_000, 20)) * math.sqrt(10)
    sums = np.cumsum(steps, axis=1)
    z = sums / np.sqrt(np.array(plan.counts))
    crossed = (z >= np.array([float(c) for c in plan.upper])).any(axis=1).mean()
    assert 0.044 < crossed <= 0.0515  # 0.05 less the rounding of each boundary up to 0.001
    assert plan.upper == tuple(sorted(plan.upper, reverse=True)) and plan.lower[-1] is None


def test_a_verdict_depends_on_the_tasks_order_only_through_its_looks():
    candidate, incumbent = pair([1.0] * 20 + [0.0] * 20, [0.0] * 40)
    early = POLICY.judge_looks(candidate, incumbent, pool=40)
    backwards = pair([0.0] * 20 + [1.0] * 20, [0.0] * 40)
    late = POLICY.judge_looks(*backwards, pool=40)
    assert early.evidence.look.tasks == 20 and late.evidence.look.tasks == 30  # 20 ties, then 10 fixed


def test_sequential_trailers_read_back_as_written():
    trailers = Trailers(
        round=3,
        policy="sequential",
        tasks=30,
        look=3,
        pool=200,
        batch=10,
        confidence=0.95,
        margin=0.0,
        statistic=2.5,
        boundary=2.448,
        crossed=Crossed.EFFICACY,
        incumbent_results="raw/r003/val-main.jsonl",
    )
    lines = format_message("s", trailers).split("\n\n")[-1].strip().splitlines()
    parsed = Trailers.parse(dict(line.split(": ", 1) for line in lines))
    assert parsed == trailers


# -- a real loop -----------------------------------------------------------------------------------


def sequential_workspace(root: Path) -> Workspace:
    """A pool of 40 val reversals in batches of 5."""
    suite = reversal_suite(root / "suite", 40)
    ws = api.init_workspace(
        root / "ws", benchmark=f"jsonl:{suite}", model="openai/scripted", api_base=UNUSED_SERVER, concurrency=4
    )
    set_gate(ws, policy="sequential", batch=5)
    return ws


def set_gate(ws: Workspace, **gate) -> None:
    config = yaml.safe_load((ws.root / "wikiskill.yaml").read_text())
    config["gate"] = gate
    (ws.root / "wikiskill.yaml").write_text(yaml.safe_dump(config))


@pytest.fixture(scope="module")
def evolved(tmp_path_factory):
    """Round 1 (the spelling skill fixes every val task) and round 2 (a skill that changes nothing)."""
    ws = sequential_workspace(tmp_path_factory.mktemp("sequential"))
    assert evolve_scripted(ws, rounds=2).decisions == ["accepted", "rejected"]
    return ws


def test_a_clear_gain_stops_at_its_third_look_and_a_useless_change_at_its_fifth(evolved):
    first, second = round_state(evolved, 1).gate.meta, round_state(evolved, 2).gate.meta
    assert (first.decision, first.tasks, first.look, first.pool, first.crossed) == (
        Decision.ACCEPTED,
        15,
        3,
        40,
        Crossed.EFFICACY,
    )
    assert (second.decision, second.tasks, second.look, second.crossed) == (Decision.REJECTED, 25, 5, Crossed.FUTILITY)
    assert first.statistic == pytest.approx(math.sqrt(15), abs=1e-6) and first.boundary < first.statistic
    assert first.incumbent_results == "raw/r001/val-main.jsonl"
    looks = [c.meta.look for c in evolved.log("rejected/r002-useless-hint") if c.meta.round == 2 and c.meta.look]
    assert looks == [5, 4, 3, 2, 1]  # each look committed once, newest first


def test_the_impact_entry_show_and_the_report_say_where_the_validation_stopped(evolved):
    impact = (evolved.root / "wiki/skill-impact.md").read_text()
    assert "- Sequential: look 3 of 8, 15 of 40 tasks: z 3.873 >= efficacy bound" in impact
    assert "- Sequential: look 5 of 8, 25 of 40 tasks: z 0.000 < futility bound" in impact
    story = api.show_round(evolved, 2)
    assert story.looks.startswith("look 5 of 8: 25 of 40 val tasks, z 0.000 crossed the futility bound")
    assert len(story.validation) == 25 and len(story.incumbent_validation) == 25
    report = report_data(evolved)
    assert report.validated_round == 2 and report.looks == story.looks
    assert [task.incumbent for task in report.tasks] == [1.0] * 25  # main's side of every look, not only its merge's


def test_audit_replays_a_sequential_verdict_and_flags_one_its_results_do_not_give(evolved):
    assert api.audit(evolved).problems == []
    merge = round_state(evolved, 1).gate
    # a merge on main claiming round 1's verdict came one look earlier, on main's skills as they are
    incumbent = digest([merge.meta.setup, skills_id(evolved, MAIN)])
    claims = merge.meta.model_copy(update={"look": 2, "tasks": 10, "round": 3, "incumbent_fingerprint": incumbent})
    evolved.commit(
        {},
        format_message("r3 gate: accepted spell-letters", claims),
        base=evolved.tree_id(merge.sha, ""),
        extra_parents=(merge.parents[1],),
    )
    problems = api.audit(evolved).problems
    assert problems == [
        "round 3 (spell-letters, " + evolved.head(MAIN)[:10] + "): claims accepted at look 2 on "
        "10 tasks; its committed results give accepted at look 3 on 15 tasks"
    ]


def test_after_a_sequential_merge_another_policy_and_compare_evaluate_main_on_every_val_task(tmp_path):
    ws = sequential_workspace(tmp_path)
    assert evolve_scripted(ws, rounds=1).decisions == ["accepted"]
    assert round_state(ws, 1).gate.meta.tasks == 15  # main's recorded evaluation covers these only
    world = RunOptions(model_factory=lambda role: WorldModel(ScriptedWorld()))
    comparison = api.compare(ws, "baseline", "main", options=world)
    assert len(comparison.rows) == 40 and comparison.mean_diff == 1.0
    set_gate(ws, policy="paired")
    result = evolve_scripted(ws, rounds=1)
    revalidated = [c for c in ws.log(MAIN) if c.meta.round == 2 and c.meta.step == Step.INCUMBENT]
    assert len(revalidated) == 1 and evaluation_at(ws, revalidated[0]).n == 40
    assert result.stopped_early and result.incumbent == 1.0  # now known on every task, not on 15
