"""The self-written arm of `wikiskill uplift`: the proposer's model writes skills once from the
train tasks' instructions alone, with no trajectory, no answer and no feedback (SkillsBench's
self-generated skills). It answers "do skills help only because they come from experience?".

The reply is held to `WrittenSkills`' JSON schema where the server takes one (`response_format`),
the schema the reply is parsed with; a reply that does not parse is shown its error once to
repair. The instructions are cut to what the server's measured speed answers in time. When no
skills come of it (the call failed, or neither reply parsed), `SkillsNotWritten` says why."""

from __future__ import annotations

from pydantic import BaseModel, ValidationError

from ..core.errors import ModelError, SkillsNotWritten
from ..core.prompts import render
from ..llm.chat import ChatModel, Message, Paced
from ..llm.context import conversation_tokens
from ..llm.jsontext import extract_json
from ..store.trailers import Parsed

MAX_SKILLS = 5
INSTRUCTION_CHARS = 2000
"""Each instruction is cut to this many characters."""
MIN_INSTRUCTION_CHARS = 200
"""To fit the measured speed, instructions are shortened down to this many characters, then fewer are shown."""


class WrittenSkill(BaseModel):
    name: str
    skill_md: str


class WrittenSkills(BaseModel):
    skills: list[WrittenSkill]


class SkillWriter:
    def __init__(self, model: ChatModel, max_skills: int = MAX_SKILLS):
        self.model, self.max_skills = model, max_skills
        self.parsed: Parsed | None = None
        """How the last `write`'s reply was read."""

    def write(self, instructions: list[str]) -> list[WrittenSkill]:
        """The skills the model writes for tasks with these instructions; SkillsNotWritten with the
        reason when none come of it."""
        messages = self._fitted(instructions)
        self.parsed, error = Parsed.GAVE_UP, ""
        for attempt in (1, 2):
            try:
                reply = self.model.complete(messages, response_model=WrittenSkills)
            except ModelError as exc:
                raise SkillsNotWritten(f"the self-written arm's model call failed: {exc}") from None
            try:
                written = WrittenSkills.model_validate(extract_json(reply.content))
            except (ValueError, ValidationError) as exc:  # pydantic's ValidationError is a ValueError
                error = " ".join(str(exc).split())[:200]
                messages = [
                    *messages,
                    reply.message(),
                    {"role": "user", "content": render("json_repair", reason=error)},
                ]
                continue
            self.parsed = Parsed.FIRST if attempt == 1 else Parsed.REPAIRED
            return written.skills[: self.max_skills]
        raise SkillsNotWritten(
            f"the self-written arm's model gave no skills after one repair ({error}): it looks too weak for "
            "the role; try a larger `proposer.model`"
        )

    def _fitted(self, instructions: list[str]) -> list[Message]:
        """The prompt, its instructions shortened, then fewer, to fit the measured speed's budget."""

        def prompt(shown: list[str], chars: int) -> list[Message]:
            return [
                {"role": "system", "content": render("skill_writer_system", max_skills=self.max_skills)},
                {"role": "user", "content": render("skill_writer_user", instructions=[t[:chars] for t in shown])},
            ]

        budget = self.model.prompt_budget() if isinstance(self.model, Paced) else None
        shown, chars = list(instructions), INSTRUCTION_CHARS
        while budget is not None and conversation_tokens(prompt(shown, chars)) > budget:
            if chars > MIN_INSTRUCTION_CHARS:
                chars = max(MIN_INSTRUCTION_CHARS, chars // 2)
            elif len(shown) > 1:
                shown.pop()
            else:
                break
        return prompt(shown, chars)
