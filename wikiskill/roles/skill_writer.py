"""The self-written arm of `wikiskill uplift`: the proposer's model writes skills once from the
train tasks' instructions alone, with no trajectory, no answer and no feedback (SkillsBench's
self-generated skills). It answers "do skills help only because they come from experience?"."""

from __future__ import annotations

from pydantic import BaseModel, ValidationError

from ..core.errors import WikiskillError
from ..core.prompts import render
from ..llm.chat import ChatModel
from ..llm.jsontext import extract_json

MAX_SKILLS = 5
INSTRUCTION_CHARS = 2000
"""Each instruction is cut to this many characters."""


class WrittenSkill(BaseModel):
    name: str
    skill_md: str


class WrittenSkills(BaseModel):
    skills: list[WrittenSkill]


class SkillWriter:
    def __init__(self, model: ChatModel, max_skills: int = MAX_SKILLS):
        self.model, self.max_skills = model, max_skills

    def write(self, instructions: list[str]) -> list[WrittenSkill]:
        """The skills the model writes for tasks with these instructions; WikiskillError when its
        reply holds none."""
        messages = [
            {"role": "system", "content": render("skill_writer_system", max_skills=self.max_skills)},
            {
                "role": "user",
                "content": render("skill_writer_user", instructions=[t[:INSTRUCTION_CHARS] for t in instructions]),
            },
        ]
        reply = self.model.complete(messages, response_model=WrittenSkills)
        try:
            written = WrittenSkills.model_validate(extract_json(reply.content))
        except (ValueError, ValidationError) as exc:
            raise WikiskillError(f"the self-written arm's model gave no skills: {str(exc)[:200]}") from None
        return written.skills[: self.max_skills]
