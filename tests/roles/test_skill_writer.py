"""The self-written arm's writer: the model writes skills from the tasks' instructions alone, each
instruction cut short, at most `max_skills` kept; the reply is asked for with the schema it is
parsed with, a reply without skills is shown its error once to repair, and when none come of it
the writer raises SkillsNotWritten with the reason."""

import json

import pytest

from chatmodels import served_model
from wikiskill.core.errors import SkillsNotWritten
from wikiskill.llm.toolcalls import json_schema
from wikiskill.roles.skill_writer import INSTRUCTION_CHARS, SkillWriter, WrittenSkills
from wikiskill.store.trailers import Parsed
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply


def write(reply: str | list[str], instructions: list[str], max_skills: int = 5, writer: list | None = None):
    replies = iter(reply) if isinstance(reply, list) else None
    with FakeOpenAIServer(lambda body: next(replies) if replies else reply) as server:
        made = SkillWriter(served_model(server, "proposer"), max_skills=max_skills)
        if writer is not None:
            writer.append(made)
        written = made.write(instructions)
    return written, server.requests


def skills(count: int) -> str:
    return json.dumps({"skills": [{"name": f"s{i}", "skill_md": f"---\nname: s{i}\n---\n"} for i in range(count)]})


def test_the_skills_written_are_kept_up_to_the_most_allowed():
    written, _ = write(skills(4), ["Reverse the word 'cat'."], max_skills=3)
    assert [skill.name for skill in written] == ["s0", "s1", "s2"]
    assert written[0].skill_md == "---\nname: s0\n---\n"


def test_the_model_is_shown_each_instruction_cut_to_its_length():
    long = "Sort the list. " + "x" * (2 * INSTRUCTION_CHARS)
    _, requests = write(skills(1), [long, "Count the letters of 'banana'."])
    prompt = requests[0]["messages"][-1]["content"]
    assert long[:INSTRUCTION_CHARS] in prompt and long[: INSTRUCTION_CHARS + 1] not in prompt
    assert "Count the letters of 'banana'." in prompt


@pytest.mark.parametrize("reply", ["I would write a skill about sorting.", json.dumps({"skills": [{"name": "x"}]})])
def test_two_replies_without_usable_skills_raise_skills_not_written_with_the_weak_model_advice(reply):
    with pytest.raises(SkillsNotWritten, match="the self-written arm's model gave no skills after one repair") as info:
        write(reply, ["Reverse the word 'cat'."])
    assert "try a larger `proposer.model`" in info.value.reason


def test_the_reply_is_asked_for_with_the_schema_it_is_parsed_with():
    _, requests = write(skills(1), ["Reverse the word 'cat'."])
    sent = requests[0]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == json_schema(WrittenSkills)


def test_a_reply_that_does_not_parse_is_shown_its_error_once_and_the_repair_is_counted():
    writers: list = []
    written, requests = write(["Here are skills: none yet.", skills(2)], ["Sort."], writer=writers)
    assert [skill.name for skill in written] == ["s0", "s1"] and writers[0].parsed == Parsed.REPAIRED
    assert "Your reply could not be read: no JSON object found" in requests[1]["messages"][-1]["content"]


def test_a_call_that_fails_raises_skills_not_written_not_a_model_error():
    with FakeOpenAIServer(lambda body: Reply(status=500, content="the model crashed")) as server:
        with pytest.raises(SkillsNotWritten, match="the self-written arm's model call failed"):
            SkillWriter(served_model(server, "proposer")).write(["Sort."])
