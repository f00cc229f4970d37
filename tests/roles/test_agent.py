"""The QA task agent and what every task agent shares: the answer is the last <answer> tags'
content, the skills reach the system prompt (or, in `index` mode, a `load_skill` call the
agent answers itself), and a conversation too long for the model fails its task alone."""

import asyncio

from chatmodels import served_model
from wikiskill.benchmarks.builtin import ExampleQAFamily
from wikiskill.benchmarks.jsonl import JsonlQA
from wikiskill.core.resources import data_dir
from wikiskill.knowledge.settings import SkillsMode, SkillsSettings
from wikiskill.knowledge.skills import parse_skill
from wikiskill.roles.agent import LookupTools, QAAgent, ending_with, extract_action, extract_answer, final_answer
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply
from workspaces import skill_md

SUITE = JsonlQA(data_dir("benchmarks") / "example-qa", name="example-qa", spec=ExampleQAFamily.spec)
TASK = SUITE.tasks("train")[0]
SKILL = parse_skill(skill_md("spell-letters"))


def answer(body: dict) -> str:
    return f"Thinking <answer>wrong</answer> then <ANSWER> {TASK.answer} </answer>"


def play(handler, mode: SkillsMode = SkillsMode.FULL, context_window: int | None = None):
    with FakeOpenAIServer(handler, context_window=context_window) as server:
        agent = QAAgent(served_model(server, "agent"), SUITE, [SKILL], SkillsSettings(mode=mode))
        trajectory = asyncio.run(agent.run(TASK))
    return trajectory, server.requests


def test_the_last_answer_tags_are_the_prediction_and_it_is_scored():
    trajectory, requests = play(answer)
    assert trajectory.prediction == TASK.answer and trajectory.score == 1.0 and trajectory.error is None
    assert SKILL.body.strip() in requests[0]["messages"][0]["content"] and "tools" not in requests[0]
    assert trajectory.messages[-1]["role"] == "assistant" and trajectory.skills == ["spell-letters"]


def test_a_reply_without_answer_tags_fails_the_task_with_the_reason():
    trajectory, _ = play(lambda body: TASK.answer)
    assert trajectory.prediction is None and trajectory.error == "no <answer></answer> in the reply"


def test_in_index_mode_the_agent_answers_load_skill_itself_before_it_answers():
    def loader(body: dict) -> Reply | str:
        if body["messages"][-1]["role"] == "user":
            return Reply(tool_calls=[{"name": "load_skill", "arguments": {"name": "spell-letters"}}])
        return answer(body)

    trajectory, requests = play(loader, mode=SkillsMode.INDEX)
    assert [tool["function"]["name"] for tool in requests[0]["tools"]] == ["load_skill"]
    assert SKILL.body.strip() not in requests[0]["messages"][0]["content"]
    assert requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": SKILL.body}
    assert trajectory.prediction == TASK.answer


def test_a_conversation_too_long_for_the_model_fails_its_task_alone():
    trajectory, _ = play(answer, context_window=50)
    assert trajectory.prediction is None and "ContextWindowExceededError" in trajectory.error


def test_lookups_name_an_unknown_tool_and_a_missing_skill():
    lookups = LookupTools([SKILL], SkillsSettings(mode=SkillsMode.INDEX))
    assert lookups.names == {"load_skill"}
    assert lookups.answer("read_wiki", {"name": "x"}) == "Unknown tool 'read_wiki'."
    assert lookups.answer("load_skill", {"name": "nope"}) == "No skill named 'nope'. Available: spell-letters."
    assert LookupTools([], SkillsSettings(mode=SkillsMode.INDEX)).tools == []


def test_answers_actions_and_final_messages_are_read_from_the_text():
    assert extract_answer("<answer>a</answer> <answer> b </answer>") == "b" and extract_answer("b") is None
    assert final_answer("  plain text \n") == "plain text" and final_answer("x <answer>y</answer>") == "y"
    assert extract_action("I look.\n<action> go   north </action>") == "go north"
    assert extract_action("Let me see.\n\n  open door  \n") == "open door" and extract_action(None) == ""
    said = [{"role": "assistant", "content": "done"}]
    assert ending_with(said, "done") == said and ending_with([], "done") == said and ending_with(said, None) == said
