"""The evaluation fingerprint changes with everything that decides a score, and nothing else."""

import pytest
from test_workspace import WorldModel, scripted_workspace

from scripted import ScriptedWorld
from wikiskill.loop import fingerprint
from wikiskill.benchmarks import load_benchmark
from wikiskill.store.settings import load_config
from wikiskill.loop.fingerprint import eval_setup
from wikiskill.loop.harness import Harness


@pytest.fixture()
def ws(tmp_path):
    return scripted_workspace(tmp_path / "ws")


def setup_id(ws, **overrides):
    config = load_config(ws.root)
    data = config.model_dump()
    for dotted, value in overrides.items():
        section, _, key = dotted.rpartition(".")
        (data[section] if section else data)[key] = value
    config = type(config).model_validate(data)
    return eval_setup(config, load_benchmark(config, ws.root), "val").id


@pytest.mark.parametrize("change", [
    {"agent.model": "openai/other-model"}, {"agent.temperature": 0.7}, {"agent.max_tokens": 64},
    {"agent.max_steps": 6}, {"skills.mode": "index"}, {"seed": 1}, {"model": "openai/other-model"},
])
def test_a_setting_that_decides_the_score_changes_the_fingerprint(ws, change):
    assert setup_id(ws, **change) != setup_id(ws)


@pytest.mark.parametrize("change", [
    {"api_base": "http://127.0.0.1:9/v1"}, {"llm.timeout": 5.0}, {"llm.retries": 0}, {"concurrency": 16},
    {"maintainer.model": "openai/other-model"}, {"proposer.max_turns": 3},
])
def test_how_a_score_is_obtained_leaves_the_fingerprint_alone(ws, change):
    assert setup_id(ws, **change) == setup_id(ws)


def test_the_split_and_its_tasks_are_part_of_the_setup(ws, tmp_path):
    config = load_config(ws.root)
    benchmark = load_benchmark(config, ws.root)
    assert eval_setup(config, benchmark, "val").id != eval_setup(config, benchmark, "test").id
    assert eval_setup(config, benchmark, "val", repeats=2).id != eval_setup(config, benchmark, "val").id


def test_an_edited_agent_prompt_template_is_a_new_fingerprint_and_reuses_no_result(ws, tmp_path, monkeypatch):
    world = WorldModel(ScriptedWorld())
    harness = Harness(ws, model_factory=lambda role: world)
    first = harness.evaluate("main", "val", "first")
    calls = world.calls
    assert Harness(ws, model_factory=lambda role: world).evaluate("main", "val", "again").evaluation == first.evaluation
    assert world.calls == calls  # the same fingerprint: every task came from the result cache

    prompts = tmp_path / "prompts"
    prompts.mkdir()
    for template in fingerprint.data_dir("prompts").glob("*.j2"):
        (prompts / template.name).write_text(template.read_text())
    (prompts / "agent_qa.j2").write_text((prompts / "agent_qa.j2").read_text() + "\nThink twice.\n")
    monkeypatch.setattr(fingerprint, "data_dir", lambda name: prompts)
    fingerprint.agent_prompts_digest.cache_clear()
    try:
        edited = Harness(ws, model_factory=lambda role: world).evaluate("main", "val", "edited")
    finally:
        fingerprint.agent_prompts_digest.cache_clear()
    assert edited.evaluation.fingerprint != first.evaluation.fingerprint
    assert world.calls == calls + 6  # every val task ran again
