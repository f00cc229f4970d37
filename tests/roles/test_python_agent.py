"""`agent.runner: python:...`: the user's callable is given the task, the skills (as a prompt block
and as Agent Skills folders) and an empty working directory; whatever form its answer takes (a
string, an `AgentResult`, a dict or an object with those fields, sync or async) becomes the
trajectory, and a callable that raises or answers nothing fails that task alone."""

import asyncio
import types

import pytest

from wikiskill.benchmarks.builtin import ExampleQAFamily
from wikiskill.benchmarks.jsonl import JsonlQA
from wikiskill.core.errors import ConfigError
from wikiskill.core.resources import data_dir
from wikiskill.knowledge.settings import SkillsSettings
from wikiskill.knowledge.skills import parse_skill
from wikiskill.roles.python_agent import AgentResult, AgentRun, PythonAgent, load_runner
from wikiskill.roles.settings import RoleSettings
from wikiskill.store.traces import Usage
from workspaces import skill_md

SUITE = JsonlQA(data_dir("benchmarks") / "example-qa", name="example-qa", spec=ExampleQAFamily.spec)
TASK = SUITE.tasks("train")[0]
SKILLS = [parse_skill(skill_md("spell-letters"))]


def play(function) -> object:
    agent = PythonAgent(function, SUITE, SKILLS, SkillsSettings(), RoleSettings(model="openai/fake-model"))
    return asyncio.run(agent.run(TASK))


def test_the_callable_is_given_the_task_the_skills_and_an_empty_working_directory():
    seen: list[AgentRun] = []

    def agent(run: AgentRun) -> str:
        seen.append(run)
        assert list(run.workdir.iterdir()) == []
        assert (run.skills_dir / "spell-letters" / "SKILL.md").read_text() == SKILLS[0].text
        return f"<answer>{TASK.answer}</answer>"

    trajectory = play(agent)
    run = seen[0]
    assert run.task == TASK.question and run.task_id == TASK.id and run.model == "openai/fake-model"
    assert "spell-letters" in run.skills_prompt and run.environment is None
    assert trajectory.prediction == TASK.answer and trajectory.score == 1.0 and trajectory.error is None
    assert trajectory.skills == ["spell-letters"] and not run.workdir.exists()


@pytest.mark.parametrize(
    "returned",
    [
        AgentResult("42", [{"role": "user", "content": "hi"}], Usage(prompt_tokens=3)),
        {"answer": "42", "messages": [{"role": "user", "content": "hi"}], "usage": {"prompt_tokens": 3}},
        types.SimpleNamespace(answer="42", messages=[{"role": "user", "content": "hi"}], usage=Usage(prompt_tokens=3)),
    ],
    ids=["AgentResult", "dict", "object"],
)
def test_every_form_of_result_gives_the_answer_the_messages_and_the_usage(returned):
    trajectory = play(lambda run: returned)
    assert trajectory.prediction == "42" and trajectory.usage.prompt_tokens == 3
    assert trajectory.messages == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "42"}]


def test_an_async_callable_is_awaited():
    async def agent(run: AgentRun) -> str:
        await asyncio.sleep(0)
        return "async answer"

    assert play(agent).prediction == "async answer"


def test_a_callable_that_raises_or_answers_nothing_fails_its_task_with_the_reason():
    def broken(run: AgentRun) -> str:
        raise ValueError("no model\nconfigured")

    assert play(broken).error == "the agent raised ValueError: no model configured"
    assert play(lambda run: None).error == "the agent returned no answer"


def test_a_runner_spec_that_names_nothing_callable_is_a_one_line_config_error(tmp_path, monkeypatch):
    (tmp_path / "my_agents.py").write_text("NOT_A_FUNCTION = 3\n\ndef solve(run):\n    return 'x'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_runner("python:my_agents:solve")(None) == "x"
    with pytest.raises(ConfigError, match="agent.runner: python:my_agents:NOT_A_FUNCTION is not callable"):
        load_runner("python:my_agents:NOT_A_FUNCTION")
    with pytest.raises(ConfigError, match="agent.runner: cannot load python:my_agents:missing"):
        load_runner("python:my_agents:missing")
    with pytest.raises(ConfigError, match="is not python:MODULE:FUNCTION or python:NAME"):
        load_runner("my_agents.solve")
