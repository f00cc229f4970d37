"""loop/steps/proposal.py: the proposer's change is committed on its own candidate branch (a
change it may not make closes the round on main instead), and a candidate whose branch main
moved away from is re-applied onto main's current skills before it is validated."""

import pytest

from inprocess import run_round_through, scripted_harness, scripted_workspace
from wikiskill.loop.steps.proposal import Propose, Reapply
from wikiskill.store.rounds import round_state
from wikiskill.store.trailers import Action, Decision, Step, Trailers
from wikiskill.store.workspace import MAIN
from workspaces import edit_config


@pytest.fixture()
def harness(tmp_path):
    with scripted_harness(scripted_workspace(tmp_path / "ws")) as harness:
        harness.publishing.commit("baseline", Trailers(round=0, step=Step.HUMAN))  # something for main to move from
        yield harness


def test_the_proposal_is_committed_on_its_own_candidate_branch(harness):
    run_round_through(harness, Propose)
    state = round_state(harness.ws, 1)
    assert state.branch == "skill/r001-spell-letters" and not state.closed
    assert state.proposal is not None and state.proposal.meta.action == Action.CREATE
    assert harness.ws.read_file(state.branch, "skills/spell-letters/SKILL.md")
    assert harness.ws.read_file(MAIN, "skills/spell-letters/SKILL.md") is None
    assert Propose().done(harness.steps, state)


def test_a_proposal_to_change_a_locked_skill_closes_the_round_on_main_as_invalid(harness):
    edit_config(harness.ws, **{"skills.locked": ["spell-letters"]})
    with scripted_harness(harness.ws) as locked:
        run_round_through(locked, Propose)
        state = round_state(locked.ws, 1)
    assert state.closed and state.branch is None
    assert state.gate is not None and state.gate.meta.decision == Decision.INVALID
    assert "skill 'spell-letters' is locked" in harness.ws.body(state.gate.sha)


def test_a_candidate_main_moved_away_from_is_reapplied_onto_main(harness):
    run_round_through(harness, Propose)
    step = Reapply()
    assert step.done(harness.steps, round_state(harness.ws, 1))
    moved = harness.publishing.commit(
        "a hand edit", Trailers(round=1, step=Step.HUMAN), {"wiki/notes.md": "a person's note\n"}
    )
    state = round_state(harness.ws, 1)
    assert not step.done(harness.steps, state)
    step.run(harness.steps, state)
    state = round_state(harness.ws, 1)
    tip = harness.ws.log(state.candidate, first_parent=False)[0]
    assert tip.meta.step == Step.REAPPLY and tip.parents[1] == moved
    assert harness.ws.read_file(state.candidate, "wiki/notes.md") == "a person's note\n"
    assert step.done(harness.steps, state)
