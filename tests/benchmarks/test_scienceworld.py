"""The `scienceworld` suite: ScienceWorld's gold action sequence scores 1, looking around scores 0,
and a scripted model plays it through init, one evolve round and eval. All tests of this module
share the process's pool of ScienceWorld VMs, so the JVM starts once; those that start it need Java."""

from __future__ import annotations

import json

import pytest

from conftest import needs_java
from scripted import ScriptedWorld
from wikiskill import api
from wikiskill.benchmarks import normalized_score, registry
from wikiskill.benchmarks.scienceworld import POOL, ScienceWorld, variations
from wikiskill.benchmarks.scienceworld_family import ScienceWorldFamily
from wikiskill.core.errors import BenchmarkError, ConfigError
from wikiskill.testing.fakeserver import FakeOpenAIServer

pytestmark = pytest.mark.slow


PAINT = "chemistry-mix-paint-secondary-color"
"""A task type whose gold path replays the same every time (heating tasks' paths vary with timing)."""


@pytest.fixture(scope="module")
def paint():
    yield ScienceWorld(
        PAINT, {"train": 1, "val": 1, "test": 1}, spec=ScienceWorldFamily.spec, name=f"scienceworld:{PAINT}"
    )
    POOL.close()


def play(bench: ScienceWorld, task, actions: list[str]):
    env = bench.make_env(task)
    try:
        state = env.reset()
        for action in actions:
            state = env.step(action)
        return state
    finally:
        env.close()


@needs_java
def test_the_gold_actions_score_one_and_looking_around_scores_zero(paint):
    task = paint.tasks("train")[0]
    won = play(paint, task, paint.reference_actions(task))
    assert won.done and won.won and normalized_score(won) == 1.0
    idle = play(paint, task, ["look around"] * 3)
    assert not idle.done and normalized_score(idle) == 0.0
    assert "look around" in idle.admissible_actions


@needs_java
def test_splits_come_from_scienceworlds_own_variations_and_are_fixed(paint):
    splits = variations(PAINT)
    for split in ("train", "val", "test"):
        (task,) = paint.tasks(split)
        assert task.metadata["variation"] in splits[split]
        assert task.question.startswith("Your task is to use chemistry to create")
    wide = ScienceWorld(None, {"train": 3, "val": 0, "test": 0}, spec=ScienceWorldFamily.spec, name="scienceworld")
    assert len({task.metadata["task_name"] for task in wide.tasks("train")}) == 3
    assert [t.id for t in wide.tasks("train")] == [t.id for t in wide.tasks("train")]


@needs_java
def test_asking_for_more_variations_than_a_split_has_is_refused(paint):
    greedy = ScienceWorld(
        PAINT,
        {"train": 0, "val": 500, "test": 0},
        configured=frozenset({"val"}),
        spec=ScienceWorldFamily.spec,
        name=f"scienceworld:{PAINT}",
    )
    with pytest.raises(
        BenchmarkError, match=f"ScienceWorld has {len(variations(PAINT)['val'])} val variations, not 500"
    ):
        greedy.tasks("val")


def test_task_names_and_ids_are_checked_without_starting_java(tmp_path):
    assert registry.canonical_name("scienceworld:1-1") == "scienceworld:boil"
    with pytest.raises(BenchmarkError, match="unknown ScienceWorld task 'boil-the-ocean'"):
        registry.resolve("scienceworld:boil-the-ocean")
    with pytest.raises(ConfigError, match="offline model cannot play scienceworld"):
        api.init_workspace(tmp_path / "ws", benchmark="scienceworld")


class LookingWorld(ScriptedWorld):
    """The task agent looks around every turn."""

    def answer(self, system: str, question: str) -> str:
        return "I should look first. <action>look around</action>"


@needs_java
def test_scienceworld_is_initialised_evolved_and_evaluated_against_the_scripted_server(tmp_path, paint):
    with FakeOpenAIServer(LookingWorld()) as server:
        ws = api.init_workspace(
            tmp_path / "ws",
            benchmark=f"scienceworld:{PAINT}",
            model="openai/fake-model",
            api_base=server.base_url,
            train=1,
            val=1,
            test=1,
            concurrency=1,
        )
        config = ws.root / "wikiskill.yaml"
        config.write_text(config.read_text().replace("max_steps: 100", "max_steps: 2"))
        evolved = api.evolve(ws, 1)
        result = api.evaluate(ws, "test")
    assert evolved.rounds_completed == 1
    assert result.evaluation.mean == 0.0
    (trace_file,) = (ws.root / "raw/r001/train").glob(f"sw-{PAINT}-*.json")
    trace = json.loads(trace_file.read_text())
    assert trace["question"].startswith("Your task is to use chemistry to create")
    assert [step["action"] for step in trace["steps"]] == ["look around", "look around"]
    assert "This room is called" in trace["steps"][0]["observation"]
