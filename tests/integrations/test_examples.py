"""The examples run for real: in examples/openai_agents_skills.py the OpenAI Agents SDK agent gets
the skills block, calls `load_skill`, and answers, against the local OpenAI-compatible test server;
examples/evolve_from_python.py evolves a workspace through `wikiskill.api` with the offline model."""

import importlib.util
from pathlib import Path

import pytest

from wikiskill import api
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply
from workspaces import commit_skills, merge_skill, new_workspace, until

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "openai_agents_skills.py"
ANSWER = "Convert to grams first: 250 g + 1200 g = 1450 g."


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("openai_agents_skills", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def ws(tmp_path):
    workspace = new_workspace(tmp_path)
    commit_skills(workspace, ["spell-letters", "convert-units"])
    return workspace


def load_then_answer(body: dict) -> Reply | str:
    """A model that loads the convert-units skill, then answers once the tool result is in."""
    if any(message["role"] == "tool" for message in body["messages"]):
        return ANSWER
    return Reply(tool_calls=[{"name": "load_skill", "arguments": {"name": "convert-units"}}])


def system_prompt(body: dict) -> str:
    return next(message["content"] for message in body["messages"] if message["role"] == "system")


def test_the_example_script_gives_the_agent_its_skills_and_answers(example, ws, capsys):
    with FakeOpenAIServer(load_then_answer) as server:
        example.main(
            [str(ws.root), "Add 250 g and 1.2 kg of flour.", "--model", "fake-model", "--base-url", server.base_url]
        )
        first, second = server.requests
    assert capsys.readouterr().out.strip() == ANSWER
    assert "<name>convert-units</name>" in system_prompt(first) and "<name>spell-letters</name>" in system_prompt(first)
    assert "Follow the convert-units steps" not in system_prompt(first)  # index mode: bodies on demand
    assert [tool["function"]["name"] for tool in first["tools"]] == ["load_skill"]
    tool_result = next(message for message in second["messages"] if message["role"] == "tool")
    assert "Follow the convert-units steps" in tool_result["content"]


def test_a_running_agent_picks_up_a_merged_skill(example, ws):
    with FakeOpenAIServer(load_then_answer) as server, api.skill_set(ws.root).live() as skills:
        agent = example.skills_agent(skills, example.chat_model("fake-model", server.base_url, None))
        assert example.Runner.run_sync(agent, "task", context="task").final_output == ANSWER
        merge_skill(ws, "quote-shell-paths", 2)
        until(lambda: "quote-shell-paths" in skills.names())
        assert example.Runner.run_sync(agent, "task", context="task").final_output == ANSWER
        before, after = system_prompt(server.requests[0]), system_prompt(server.requests[2])
    assert "quote-shell-paths" not in before and "<name>quote-shell-paths</name>" in after


def test_the_evolve_from_python_example_runs_a_round_and_compares_with_the_offline_model(tmp_path, capsys):
    path = Path(__file__).resolve().parents[2] / "examples" / "evolve_from_python.py"
    spec = importlib.util.spec_from_file_location("evolve_from_python", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main([str(tmp_path / "ws"), "--train", "3", "--val", "2"])
    out = capsys.readouterr().out
    assert "1 round(s) completed; decisions: [" in out
    assert "main on val: " in out and "over 2 task(s)" in out and "main - baseline on val: " in out
    assert api.round_log(api.open_workspace(tmp_path / "ws"))[0].round == 1
