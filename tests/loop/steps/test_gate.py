"""loop/steps/gate.py: the gate closes each round with one commit on main: a candidate the policy
accepts is merged with its evidence, one it rejects is kept as a `rejected/` tag, and a round
whose proposal never reaches validation is closed without a merge; the branch is gone after."""

import pytest

from inprocess import run_round_through, scripted_harness, scripted_workspace
from wikiskill.core.errors import WorkspaceError
from wikiskill.loop.impact import IMPACT
from wikiskill.loop.steps.gate import Gate, close_without_merge, judge_candidate
from wikiskill.loop.steps.proposal import Propose
from wikiskill.store.rounds import rejected_tag, round_state
from wikiskill.store.trailers import Action, Decision, Step
from wikiskill.store.workspace import MAIN

BRANCH = "skill/r001-spell-letters"


@pytest.fixture()
def harness(tmp_path):
    with scripted_harness(scripted_workspace(tmp_path / "ws")) as harness:
        yield harness


def test_a_round_closed_without_a_merge_keeps_its_branch_as_a_rejected_tag(harness):
    harness.publishing.create_branch(BRANCH, MAIN)
    tip = harness.ws.head(BRANCH)
    close_without_merge(
        harness.steps, 1, Action.CREATE, "spell-letters", "why", Decision.REJECTED, "stale: conflicts", 0.5, BRANCH
    )
    gate = round_state(harness.ws, 1).gate
    assert gate is not None and (gate.meta.step, gate.meta.decision) == (Step.GATE, Decision.REJECTED)
    assert harness.ws.head(BRANCH) is None
    assert harness.ws.refs("refs/tags/rejected/") == {rejected_tag(BRANCH): tip}
    assert "stale: conflicts" in (harness.ws.read_file(MAIN, IMPACT) or "")


def test_the_gate_refuses_to_judge_a_candidate_with_no_current_validation(harness):
    run_round_through(harness, Propose)
    with pytest.raises(WorkspaceError, match="found no current validation"):
        judge_candidate(harness.evaluating, round_state(harness.ws, 1))


def test_the_gate_merges_an_accepted_candidate_and_deletes_its_branch(harness):
    run_round_through(harness, Gate)
    state = round_state(harness.ws, 1)
    assert state.gate is not None and state.gate.meta.decision == Decision.ACCEPTED
    assert len(state.gate.parents) == 2 and harness.ws.head(BRANCH) is None
    assert harness.ws.read_file(MAIN, "skills/spell-letters/SKILL.md")
    assert Gate().done(harness.steps, state)


def test_without_a_candidate_there_is_nothing_to_judge(harness):
    assert Gate().done(harness.steps, round_state(harness.ws, 1))
