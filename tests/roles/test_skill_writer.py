"""The self-written arm's writer: the model writes skills from the tasks' instructions alone, each
instruction cut short, at most `max_skills` kept, and a reply without skills is an error."""

import json

import pytest

from chatmodels import served_model
from wikiskill.core.errors import WikiskillError
from wikiskill.roles.skill_writer import INSTRUCTION_CHARS, SkillWriter
from wikiskill.testing.fakeserver import FakeOpenAIServer


def write(reply: str, instructions: list[str], max_skills: int = 5):
    with FakeOpenAIServer(lambda body: reply) as server:
        written = SkillWriter(served_model(server, "proposer"), max_skills=max_skills).write(instructions)
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
def test_a_reply_without_usable_skills_is_an_error(reply):
    with pytest.raises(WikiskillError, match="the self-written arm's model gave no skills"):
        write(reply, ["Reverse the word 'cat'."])
