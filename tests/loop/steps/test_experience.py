"""loop/steps/experience.py: the rollout plays every train task with main's skills and commits
their trajectories; the maintainer turns sampled ones into wiki pages; consolidation runs every
`wiki.consolidate_every` rounds. Each is one commit on main that `done` finds again."""

import pytest

from inprocess import scripted_harness, scripted_workspace
from wikiskill.loop.steps.experience import Consolidate, Maintain, Rollout
from wikiskill.store.rounds import round_state
from wikiskill.store.trailers import Step
from wikiskill.store.workspace import MAIN
from workspaces import edit_config


@pytest.fixture()
def ws(tmp_path):
    return scripted_workspace(tmp_path / "ws")


def test_the_rollout_commits_each_train_trajectory_and_the_outcomes_once(ws):
    with scripted_harness(ws) as harness:
        step = Rollout()
        assert not step.done(harness.steps, round_state(ws, 1))
        step.run(harness.steps, round_state(ws, 1))
        state = round_state(ws, 1)
        assert step.done(harness.steps, state) and state.rollout is not None
        files = ws.read_files(MAIN, "raw/r001/train")
        played = harness.reading.tasks("train")
        assert sorted(files) == sorted([f"{task.id}.json" for task in played] + ["outcomes.jsonl"])
        assert len(harness.reading.train_results(1)) == len(played)


def test_the_maintainer_writes_pattern_pages_from_the_rollout(ws):
    with scripted_harness(ws) as harness:
        Rollout().run(harness.steps, round_state(ws, 1))
        step = Maintain()
        assert not step.done(harness.steps, round_state(ws, 1))
        step.run(harness.steps, round_state(ws, 1))
        head = ws.log(MAIN)[0]
        assert head.meta.step == Step.MAINTAIN and head.meta.sampled
        assert ws.read_files(MAIN, "wiki/patterns")
        assert ws.read_file(MAIN, "raw/r001/maintainer.json")
        assert step.done(harness.steps, round_state(ws, 1))


def test_a_disabled_maintainer_neither_maintains_nor_consolidates(ws):
    edit_config(ws, **{"maintainer.enabled": False, "wiki.consolidate_every": 1})
    with scripted_harness(ws) as harness:
        state = round_state(ws, 1)
        assert Maintain().done(harness.steps, state) and Consolidate().done(harness.steps, state)


def test_consolidation_is_due_only_in_every_nth_round(ws):
    edit_config(ws, **{"wiki.consolidate_every": 2})
    with scripted_harness(ws) as harness:
        assert Consolidate().done(harness.steps, round_state(ws, 1))
        step = Consolidate()
        assert not step.done(harness.steps, round_state(ws, 2))
        step.run(harness.steps, round_state(ws, 2))
        head = ws.log(MAIN)[0]
        assert (head.meta.step, head.meta.round) == (Step.CONSOLIDATE, 2)
        assert step.done(harness.steps, round_state(ws, 2))
