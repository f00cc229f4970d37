"""loop/steps/indecisive.py: a validation the provider or the budget cut short, or one with too
many infrastructure failures, is committed on its branch as indecisive, never merged; main's
own evaluation past the share commits nothing."""

import pytest

from inprocess import scripted_harness, scripted_workspace
from wikiskill.core.errors import BudgetExceeded, ModelError, ValidationIndecisive
from wikiskill.loop.evaluating import Kept
from wikiskill.loop.steps.indecisive import indecisive, refuse_infra, refuse_infra_incumbent
from wikiskill.store.evaluations import Evaluation
from wikiskill.store.rounds import round_state
from wikiskill.store.trailers import Decision, Step
from wikiskill.store.workspace import MAIN

BRANCH = "skill/r001-spell"


@pytest.fixture()
def harness(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    with scripted_harness(ws) as harness:
        harness.publishing.create_branch(BRANCH, MAIN)
        yield harness


def evaluation(scores: dict[str, float], infra: dict[str, str] | None = None) -> Evaluation:
    return Evaluation(scores=scores, infra=infra or {}, fingerprint="f", setup="s", skills_id="k")


@pytest.mark.parametrize("cut", [ModelError("the provider said 429"), BudgetExceeded("budget.max_usd reached")])
def test_a_validation_cut_short_is_committed_on_its_branch_as_indecisive(harness, cut):
    state = round_state(harness.ws, 1)
    with pytest.raises(ValidationIndecisive, match="nothing was merged"):
        with indecisive(harness.publishing, state, Step.VALIDATE):
            raise cut
    tip = harness.ws.log(BRANCH)[0]
    assert (tip.meta.step, tip.meta.decision, tip.meta.round) == (Step.VALIDATE, Decision.INDECISIVE, 1)
    assert str(cut) in tip.subject


def test_too_many_infrastructure_failures_commit_the_outcomes_but_no_evaluation(harness):
    state = round_state(harness.ws, 1)
    failed = evaluation({"a": 1.0}, infra={"b": "timeout", "c": "timeout", "d": "timeout"})
    with pytest.raises(ValidationIndecisive):
        refuse_infra(harness.steps, state, Step.VALIDATE, failed, None, {"raw/r001/val.jsonl": "rows\n"}, Kept(1, 3))
    tip = harness.ws.log(BRANCH)[0]
    assert tip.meta.decision == Decision.INDECISIVE and tip.meta.fingerprint is None
    assert harness.ws.read_file(BRANCH, "raw/r001/val.jsonl") == "rows\n"


def test_a_validation_within_the_share_commits_nothing(harness):
    before = harness.ws.head(BRANCH)
    scored = evaluation({"a": 1.0, "b": 0.0})
    refuse_infra(harness.steps, round_state(harness.ws, 1), Step.VALIDATE, scored, None, {}, Kept(2, 0))
    assert harness.ws.head(BRANCH) == before


def test_mains_own_evaluation_past_the_share_is_refused_and_nothing_is_committed(harness):
    before = harness.ws.head(MAIN)
    failed = evaluation({"a": 1.0}, infra={"b": "timeout", "c": "timeout"})
    with pytest.raises(
        ValidationIndecisive, match="nothing was recorded; 1 scored task is kept, .* only the 2 missing"
    ):
        refuse_infra_incumbent(harness.config.gate, failed, "the baseline of main's skills", Kept(1, 2))
    assert harness.ws.head(MAIN) == before
