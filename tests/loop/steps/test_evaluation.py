"""loop/steps/evaluation.py: main's skills are evaluated under the current setup before anything
is compared with them (the baseline, tagged, and a round's incumbent), and a candidate branch is
validated under that setup, each as one commit that `done` finds again."""

import pytest

from inprocess import scripted_harness, scripted_workspace
from wikiskill.core.errors import ValidationIndecisive
from wikiskill.loop.steps.evaluation import (
    EnsureIncumbent,
    Validate,
    current_evaluation,
    incumbent,
    incumbent_recorded,
    record_incumbent,
)
from wikiskill.store.rounds import round_state
from wikiskill.store.trailers import Step
from wikiskill.store.workspace import MAIN
from workspaces import edit_config


@pytest.fixture()
def harness(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    with scripted_harness(ws) as harness:
        yield harness


def test_before_any_evaluation_main_has_no_incumbent_and_asking_for_one_is_refused(harness):
    assert not incumbent_recorded(harness.evaluating)
    with pytest.raises(ValidationIndecisive, match="main has no evaluation under the current settings"):
        incumbent(harness.evaluating)


def test_the_baseline_is_committed_on_main_tagged_and_then_is_the_incumbent(harness):
    evaluation = record_incumbent(harness.steps, 0)
    head = harness.ws.log(MAIN)[0]
    assert (head.meta.step, head.meta.round, head.meta.results) == (Step.BASELINE, 0, "raw/baseline/val.jsonl")
    assert harness.ws.refs("refs/tags/baseline") == {"baseline": head.sha}
    assert incumbent_recorded(harness.evaluating)
    assert incumbent(harness.evaluating).mean == pytest.approx(evaluation.mean) == head.meta.score


def test_a_change_of_settings_makes_the_incumbent_stale_until_it_is_evaluated_again(harness, tmp_path):
    record_incumbent(harness.steps, 0)
    edit_config(harness.ws, **{"skills.mode": "index"})
    with scripted_harness(harness.ws) as changed:
        step, state = EnsureIncumbent(), round_state(changed.ws, 1)
        assert not step.done(changed.steps, state)
        step.run(changed.steps, state)
        head = changed.ws.log(MAIN)[0]
        assert (head.meta.step, head.meta.results) == (Step.INCUMBENT, "raw/r001/incumbent-val.jsonl")
        assert step.done(changed.steps, round_state(changed.ws, 1))


def test_a_candidate_is_validated_on_its_branch_once_under_the_incumbents_setup(harness):
    record_incumbent(harness.steps, 0)
    harness.publishing.create_branch("skill/r001-same", MAIN)
    step = Validate()
    state = round_state(harness.ws, 1)
    assert current_evaluation(harness.evaluating, state, state.validations) is None
    assert not step.done(harness.steps, state)
    step.run(harness.steps, state)
    state = round_state(harness.ws, 1)
    validated = current_evaluation(harness.evaluating, state, state.validations)
    assert validated is not None and validated[0].meta.step == Step.VALIDATE
    assert validated[1].setup == incumbent(harness.evaluating).setup
    assert step.done(harness.steps, state)


def test_without_a_candidate_branch_there_is_nothing_to_validate(harness):
    assert Validate().done(harness.steps, round_state(harness.ws, 1))
