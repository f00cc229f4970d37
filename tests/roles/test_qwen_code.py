"""The real Qwen Code CLI as the task agent, end to end against the local fake server: evolved
(the scripted model answers right only after loading the proposed skill through Qwen Code's
`skill` tool), isolated from the user's own skills, and used to measure skills evolved on the
built-in agent (transfer). The binary is found on PATH."""

import json
import os
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import needs, needs_cli
from qwen_world import QwenCodeWorld, tiny_workspace
from scripted import SPELL, create, skill_md
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.cli import app
from wikiskill.roles.coding_agents.qwen_code import QwenCode
from wikiskill.store.traces import Trajectory
from wikiskill.store.trailers import SkillLoading, Step
from wikiskill.store.workspace import format_message
from wikiskill.testing.fakeserver import FakeOpenAIServer
from workspaces import edit_config

needs_qwen = needs_cli(QwenCode)
pytestmark = [needs_qwen, pytest.mark.slow]


@pytest.fixture()
def planted():
    """A skill in the test's real HOME, where Qwen Code looks for the user's own skills."""
    folder = Path(os.environ["HOME"]) / ".qwen" / "skills" / "planted"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: planted\ndescription: PLANTED-USER-SKILL, never to be seen.\n---\nPLANTED-USER-SKILL body.\n"
    )
    return folder


def test_qwen_code_is_evolved_end_to_end_loading_the_proposed_skill_in_isolation(tmp_path, planted):
    world = QwenCodeWorld(proposals={1: create("spell-letters", SPELL)}, trace_ids=["train-00", "train-01"])
    with FakeOpenAIServer(world) as server:
        ws = tiny_workspace(tmp_path, server)
        edit_config(ws, **{"proposer.min_trace_reads": 2})  # both train traces
        result = api.evolve(ws, 2)

    assert result.rounds_completed == 2 and result.incumbent == pytest.approx(2 / 3)
    assert result.decisions[0] == "accepted"
    assert [skill.name for skill in api.load_skills(ws)] == ["spell-letters"]
    baseline = [json.loads(line) for line in (ws.root / "raw" / "baseline" / "val.jsonl").read_text().splitlines()]
    assert sum(row["score"] for row in baseline) == 1  # only the count is right before the skill
    trace = json.loads((ws.root / "raw" / "r002" / "train" / "train-01.json").read_text())  # lemon
    assert trace["skills"] == ["spell-letters"] and trace["skills_loaded"] == ["spell-letters"]
    calls = [call["function"] for message in trace["messages"] for call in message.get("tool_calls") or []]
    assert {"name": "skill", "arguments": '{"skill": "spell-letters"}'} in calls
    assert any(m["role"] == "tool" for m in trace["messages"]) and trace["prediction"] == "nomel"
    assert trace["score"] == 1 and trace["usage"]["prompt_tokens"] > 0
    rendered = Trajectory.model_validate(trace).render()  # what the maintainer and proposer read
    assert "skills loaded: spell-letters" in rendered and '-> skill({"skill": "spell-letters"})' in rendered
    first = json.loads((ws.root / "raw" / "r001" / "train" / "train-01.json").read_text())
    assert first["skills"] == [] and first["skills_loaded"] == [] and first["score"] == 0
    assert world.seen and not any("PLANTED" in request or "planted" in request for request in world.seen)
    assert not (ws.root / ".qwen").exists()
    usage = api.skill_usage(ws)["spell-letters"]
    assert (usage.prompts, usage.loads) == (2, 2)  # round 2's rollout: every task saw it and loaded it
    gate = next(c.meta for c in ws.log("main") if c.meta.step == Step.GATE and c.meta.round == 1)
    assert (gate.skill_loading, gate.skill_loads, gate.skill_runs) == (SkillLoading.ON_DEMAND, 3, 3)
    assert gate.never_loaded is None  # its every validation run loaded it


def test_skills_evolved_on_the_builtin_agent_are_measured_on_qwen_code(tmp_path):
    world = QwenCodeWorld()
    with FakeOpenAIServer(world) as server:
        ws = tiny_workspace(tmp_path, server, agent=None)
        before = ws.resolve("main")
        ws.commit(
            {"skills/spell-letters/SKILL.md": skill_md("spell-letters", SPELL)},
            format_message("r1 gate: spell-letters", {"Round": 1, "Step": "gate", "Decision": "accepted"}),
        )
        builtin = api.evaluate(ws, "val").evaluation
        assert not world.seen  # the built-in agent never ran Qwen Code
        result = CliRunner().invoke(app, ["-C", str(ws.root), "eval", "--split", "val", "--agent", "qwen-code"])
        assert result.exit_code == 0, result.output
        ran = len(world.seen)
        qwen = api.evaluate(ws, "val", options=RunOptions(agent="qwen-code")).evaluation
        assert len(world.seen) == ran  # the same setup: the result cache answered
        comparison = api.compare(ws, before, "main", options=RunOptions(agent="qwen-code"))
    assert builtin.mean == pytest.approx(2 / 3) and qwen.mean == pytest.approx(2 / 3)
    assert qwen.fingerprint != builtin.fingerprint
    assert comparison.a.mean == pytest.approx(1 / 3) and comparison.b.mean == pytest.approx(2 / 3)


@needs("bwrap", package="bubblewrap")
def test_qwen_code_answers_under_bubblewrap(tmp_path):
    with FakeOpenAIServer(QwenCodeWorld()) as server:
        ws = tiny_workspace(tmp_path, server)
        config = yaml.safe_load((ws.root / "wikiskill.yaml").read_text())
        config["agent"]["sandbox"] = "bwrap"
        ws.commit(
            {
                "wikiskill.yaml": yaml.safe_dump(config),
                "skills/spell-letters/SKILL.md": skill_md("spell-letters", SPELL),
            },
            format_message("sandboxed, with a skill", {"Step": "human"}),
        )
        evaluated = api.evaluate(ws, "val")
    trajectories = evaluated.runs[0]
    assert [t.error for t in trajectories] == [None, None, None]
    assert all(t.skills_loaded == ["spell-letters"] for t in trajectories)
    assert evaluated.evaluation.mean == pytest.approx(2 / 3)
