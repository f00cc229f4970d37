"""`gate.cost` end to end: one round through the CLI against the scripted server, whose task agent
spends fewer or more tokens per call when its skills carry a marker; the verdict, its trailers,
its skill-impact lines and `audit`."""

import json
import shutil

import pytest
from typer.testing import CliRunner

from conftest import git
from inprocess import WorldModel
from scripted import SPELL, ScriptedWorld, create
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.cli import app
from wikiskill.contracts.gate import CostCheck
from wikiskill.history.htmlreport import render_report, report_data
from wikiskill.loop.settings import CostRule, CostUnit
from wikiskill.store.trailers import Decision
from wikiskill.store.workspace import MAIN, Workspace
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply
from workspaces import edit_config, gate_of

BRIEF = "BRIEF-ANSWERS-MARKER"
VERBOSE = "VERBOSE-MARKER"


class TokenWorld(ScriptedWorld):
    """The scripted world whose task agent's calls are half as long under a BRIEF skill and three
    times as long under a VERBOSE one; its answers stay those of ScriptedWorld."""

    def answer(self, system: str, question: str) -> Reply:
        scale = 0.5 if BRIEF in system else 3 if VERBOSE in system else 1
        text = super().answer(system, question)
        return Reply(text, prompt_tokens=int(400 * scale), completion_tokens=int(40 * scale))


def one_round(tmp_path, proposal: dict, **gate) -> Workspace:
    runner, ws = CliRunner(), tmp_path / "ws"
    with FakeOpenAIServer(TokenWorld({1: proposal})) as server:
        init = ["init", str(ws), "--benchmark", "example-qa", "--model", "openai/fake-model"]
        assert runner.invoke(app, [*init, "--api-base", server.base_url]).exit_code == 0
        workspace = api.open_workspace(ws)
        edit_config(workspace, **{f"gate.{key}": value for key, value in gate.items()})
        result = runner.invoke(app, ["-C", str(ws), "evolve", "--rounds", "1"])
        assert result.exit_code == 0, result.output
    return api.open_workspace(ws)


BRIEF_SKILL = create("brief-answers", BRIEF)


@pytest.fixture(scope="module")
def cheaper(tmp_path_factory) -> Workspace:
    """Round 1 under `paired` and `tiebreak`: the brief-answers skill, scoring as main does."""
    return one_round(tmp_path_factory.mktemp("cheaper"), BRIEF_SKILL, policy="paired", cost="tiebreak")


@pytest.mark.parametrize("policy", ["strict", "paired", "sequential"])
def test_a_skill_that_halves_the_agents_calls_at_an_equal_score_is_merged_under_tiebreak(tmp_path, policy, cheaper):
    if policy == "paired":
        ws = cheaper
    else:  # sequential in two looks: a tie runs to the pool's end instead of stopping for futility
        ws = one_round(tmp_path, BRIEF_SKILL, policy=policy, cost="tiebreak", batch=3)
    gate = gate_of(ws, 1).meta
    assert gate.decision == Decision.ACCEPTED and gate.cost_decided and gate.cost_passed
    assert gate.cost_ratio == pytest.approx(0.5) and gate.cost_tasks == 6 and gate.mean_diff == 0
    assert gate.cost_confidence == pytest.approx(0.975)
    impact = ws.read_file(MAIN, "wiki/skill-impact.md")
    assert "- Cost (tiebreak): tokens per task 220 vs main 440 on 6 task(s), ratio 0.500" in impact
    assert "- Cost decided: accepted as cheaper" in impact
    assert api.audit(ws).problems == []


def forged_audit(tmp_path, cheaper: Workspace, drop: tuple[str, ...] = (), **trailers: str) -> list[str]:
    """`audit`'s problems with round 1's merge of a copy of `cheaper` whose message gives the
    trailers `Wikiskill-<key>: value` instead (key: the trailer's name after the prefix), and
    leaves out those in `drop`."""
    shutil.copytree(cheaper.root, tmp_path / "ws", symlinks=True)
    ws = api.open_workspace(tmp_path / "ws")
    merge = gate_of(ws, 1)
    lines = git(ws.root, "log", "-1", "--format=%B", merge.sha).splitlines()
    for key, value in trailers.items():
        at = next(i for i, line in enumerate(lines) if line.startswith(f"Wikiskill-{key}: "))
        lines[at] = f"Wikiskill-{key}: {value}"
    lines = [line for line in lines if not line.startswith(tuple(f"Wikiskill-{key}: " for key in drop))]
    parents = [arg for parent in merge.parents for arg in ("-p", parent)]
    forged = git(ws.root, "commit-tree", f"{merge.sha}^{{tree}}", *parents, "-m", "\n".join(lines)).strip()
    git(ws.root, "update-ref", "refs/heads/main", forged, merge.sha)
    label = f"round 1 (brief-answers, {forged[:10]}): "
    return [problem.removeprefix(label) for problem in api.audit(api.open_workspace(ws.root)).problems]


def test_audit_finds_a_cost_tiebreak_its_committed_results_do_not_give(tmp_path, cheaper):
    problems = forged_audit(tmp_path, cheaper, **{"Cost-P-Value": "0.001000"})
    assert problems == ["claims cost p=0.0010; its committed results give p=0.0156"]


def test_audit_refuses_a_bound_merge_whose_cost_test_did_not_pass(tmp_path, cheaper):
    # p = 1/64 replayed is not below 1 - 0.99: the test did not pass, as the commit says
    problems = forged_audit(
        tmp_path, cheaper, **{"Cost-Rule": "bound", "Cost-Confidence": "0.99", "Cost-Passed": "false"}
    )
    assert problems == ["accepted although its cost was not shown below 0.9 times main's"]


def test_audit_refuses_a_cost_tiebreak_whose_score_floor_is_not_above_minus_the_noninferiority(tmp_path, cheaper):
    assert gate_of(cheaper, 1).meta.score_floor == 0.0  # equal scores: the bound is 0, whatever the level
    problems = forged_audit(tmp_path, cheaper, Noninferiority="0.0")
    assert problems == ["accepted as cheaper although its score gain's lower bound +0.0000 is not above -0"]


def test_audit_refuses_a_cost_merge_that_records_its_rule_without_its_test(tmp_path, cheaper):
    assert forged_audit(tmp_path, cheaper, drop=("Cost-Unit",)) == ["records the cost rule tiebreak without its test"]


def test_audit_refuses_a_cost_tiebreak_whose_cost_test_did_not_pass(tmp_path, cheaper):
    # p = 1/64 replayed is not below 1 - 0.99: the test did not pass, as the commit says
    problems = forged_audit(tmp_path, cheaper, **{"Cost-Confidence": "0.99", "Cost-Passed": "false"})
    assert problems == ["accepted as cheaper although its cost was not shown lower"]


def test_audit_replays_a_cost_p_value_equal_to_the_significance_level_as_not_shown(tmp_path, cheaper):
    # p = 1/64 replayed is exactly 1 - 0.984375: not below it, as the commit says
    problems = forged_audit(tmp_path, cheaper, **{"Cost-Confidence": "0.984375", "Cost-Passed": "false"})
    assert problems == ["accepted as cheaper although its cost was not shown lower"]


def test_audit_asks_no_cost_evidence_of_a_merge_the_policy_accepted_under_tiebreak(tmp_path, cheaper):
    # the policy's own route to the merge: the cost test, which did not pass, decided nothing
    forged = {"Cost-Decided": "false", "Cost-Confidence": "0.99", "Cost-Passed": "false"}
    assert forged_audit(tmp_path, cheaper, **forged) == []


def test_audit_replays_the_score_floor_of_a_cost_tiebreak(tmp_path, cheaper):
    problems = forged_audit(tmp_path, cheaper, **{"Score-Floor": "0.1"})
    assert problems == ["claims a score gain >= +0.1000; its committed results give +0.0000"]
    # without a floor the merge claims equal means, which its results give
    assert forged_audit(tmp_path / "equal", cheaper, drop=("Score-Floor",)) == []


def test_the_same_skill_is_a_rejected_tie_when_the_gate_ignores_cost(tmp_path):
    ws = one_round(tmp_path, BRIEF_SKILL, policy="paired")
    gate = gate_of(ws, 1).meta
    assert gate.decision == Decision.REJECTED and gate.cost_rule is None


def test_a_small_gain_that_triples_the_tokens_is_rejected_under_bound(tmp_path):
    ws = one_round(tmp_path, create("spell-letters", f"{SPELL} {VERBOSE}"), policy="strict", cost="bound")
    gate = gate_of(ws, 1).meta
    assert gate.decision == Decision.REJECTED and gate.cost_decided and not gate.cost_passed
    assert gate.mean_diff > 0 and gate.cost_ratio == pytest.approx(3.0)
    assert "but its cost is tokens per task 1320 vs main 440" in ws.body(gate_of(ws, 1).sha)


def chart(html: str, name: str) -> tuple[list[dict], dict]:
    """The traces and the layout of chart `name` as plotly was given them in the page."""
    decoder = json.JSONDecoder()
    traces, end = decoder.raw_decode(html, html.index("[", html.index(f'"chart-{name}"')))
    return traces, decoder.raw_decode(html, html.index("{", end))[0]


def test_the_report_shows_score_and_cost_per_round_and_charts_one_against_the_other(cheaper):
    data = report_data(cheaper)
    assert [(c.round, c.decision, c.candidate_cost, c.incumbent_cost, c.ratio) for c in data.costs] == [
        (1, "accepted", 220.0, 440.0, 0.5)
    ]
    traces, layout = chart(render_report(data, "t"), "tradeoff")
    candidate = next(trace for trace in traces if trace.get("name") == "candidate: accepted")
    assert candidate["x"] == [220.0] and candidate["y"] == [gate_of(cheaper, 1).meta.score]
    assert layout["xaxis"]["title"]["text"] == "tokens per val task"


def test_compare_puts_each_sides_cost_beside_its_score(cheaper):
    result = api.compare(
        cheaper, "baseline", "main", options=RunOptions(model_factory=lambda role: WorldModel(ScriptedWorld()))
    )
    assert {(row.a_cost, row.b_cost) for row in result.rows} == {(440.0, 220.0)}
    assert result.cost.ratio == 0.5 and result.cost.rule is CostRule.TIEBREAK and result.cost.passed


def test_a_cost_test_of_zero_tokens_on_both_sides_says_so_instead_of_a_ratio():
    check = CostCheck(CostRule.TIEBREAK, CostUnit.TOKENS, 6, 0.0, 0.0, 0.9, 1.0, 0.95, False)
    assert check.text() == (
        "no tokens spent on either side on 6 task(s) (a model without calls or prices, such as offline): "
        "cost cannot tell them apart"
    )
