"""loop/steps/looks.py: a batched policy (`sequential`) validates a candidate a batch at a time,
main on the same tasks, committing each look on the branch before the next batch; the looks
stop at the first that crosses a boundary, and a finished validation is never looked at again."""

import pytest

from inprocess import scripted_harness, scripted_workspace
from wikiskill.loop.harness import Harness
from wikiskill.loop.steps import round_steps
from wikiskill.loop.steps.evaluation import Validate
from wikiskill.loop.steps.looks import current_look, incumbent_at, looks_finished, run_looks
from wikiskill.store.rounds import round_state
from wikiskill.store.trailers import Step
from workspaces import edit_config


@pytest.fixture()
def harness(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    edit_config(ws, **{"gate.policy": "sequential", "gate.batch": 2})
    with scripted_harness(ws) as harness:
        for step in round_steps():  # up to the validation: a candidate on its branch
            if isinstance(step, Validate):
                break
            state = round_state(ws, 1)
            if not step.done(harness.steps, state):
                step.run(harness.steps, state)
        yield harness


def plan_looks(harness: Harness):
    looks = harness.reading.policy.plan().looks
    assert looks is not None
    return looks


def test_before_the_first_look_there_is_none_and_the_validation_is_not_finished(harness):
    state, looks = round_state(harness.ws, 1), plan_looks(harness)
    assert current_look(harness.evaluating, state, looks) is None
    assert not looks_finished(harness.evaluating, state, looks)


def test_each_look_is_one_commit_on_the_branch_until_one_crosses_a_boundary(harness):
    looks = plan_looks(harness)
    run_looks(harness.steps, round_state(harness.ws, 1), looks)
    state = round_state(harness.ws, 1)
    committed = list(reversed(state.validations))
    assert [c.meta.look for c in committed] == list(range(1, len(committed) + 1))
    assert all(c.meta.step == Step.VALIDATE and c.meta.batch == 2 for c in committed)
    pool = committed[0].meta.pool or 0
    assert [c.meta.tasks for c in committed] == [min(2 * n, pool) for n in range(1, len(committed) + 1)]
    assert [c.meta.crossed is not None for c in committed] == [False] * (len(committed) - 1) + [True]
    last = current_look(harness.evaluating, state, looks)
    assert last is not None and last.sha == committed[-1].sha
    assert looks_finished(harness.evaluating, state, looks)
    assert incumbent_at(harness.reading, last).size == last.meta.tasks


def test_a_finished_validation_is_not_looked_at_again(harness):
    looks = plan_looks(harness)
    run_looks(harness.steps, round_state(harness.ws, 1), looks)
    state = round_state(harness.ws, 1)
    assert Validate().done(harness.steps, state)
    before = harness.ws.head(state.candidate)
    run_looks(harness.steps, state, looks)
    assert harness.ws.head(state.candidate) == before
