"""The rubric drafter: reads a real session and drafts the criteria a judge should grade a new
attempt at its task by, from what the session shows the user accepted (`wikiskill tasks
from-sessions`). A person reviews every draft before a suite may use it."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, Field, ValidationError

from ..core.errors import ModelError
from ..core.prompts import render
from ..llm.chat import ChatModel
from ..llm.jsontext import extract_json
from ..store.traces import Trajectory, Usage

SESSION_CHARS = 40_000
"""The session is cut to this many characters (its head and tail) for the drafter."""


class RubricDraft(BaseModel):
    accepted: str
    """What the session shows the user accepted, in a sentence or two."""
    criteria: list[str] = Field(min_length=1, max_length=8)
    """One checkable statement each, that a good result makes true."""


@dataclass
class DraftResult:
    draft: RubricDraft | None
    usage: Usage = field(default_factory=Usage)
    error: str | None = None


def parse_draft(text: str | None) -> RubricDraft:
    """The draft in a reply; ValueError with a reason the model can act on."""
    data = extract_json(text)
    try:
        draft = RubricDraft.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'object'}: {e['msg']}" for e in exc.errors()[:3])
        raise ValueError(f"the JSON object does not match the schema: {problems}") from None
    criteria = [" ".join(criterion.split()) for criterion in draft.criteria if criterion.strip()]
    if not criteria:
        raise ValueError("every criterion is empty")
    return draft.model_copy(update={"criteria": criteria})


class RubricDrafter:
    """One retry with the reason a reply did not parse; after that, or when the call fails (an
    overflow, a timeout), the draft fails with the reason for the caller to report in one line."""

    def __init__(self, model: ChatModel):
        self.model = model

    def draft(self, request: str, session: Trajectory) -> DraftResult:
        messages = [
            {"role": "system", "content": render("rubric_drafter_system")},
            {
                "role": "user",
                "content": render("rubric_drafter_user", request=request, session=session.render(SESSION_CHARS)),
            },
        ]
        result = DraftResult(None)
        for attempt in (1, 2):
            try:
                reply = self.model.complete(messages, response_model=RubricDraft)
            except ModelError as exc:  # an overflow, a timeout, a server error: no draft, with the reason
                result.error = str(exc)
                return result
            result.usage = result.usage + reply.usage
            try:
                result.draft, result.error = parse_draft(reply.content), None
                return result
            except ValueError as exc:
                result.error = str(exc)
            if attempt == 1:
                messages += [
                    reply.message(),
                    {
                        "role": "user",
                        "content": f"Your reply could not be used: {result.error}. Reply with the JSON object only.",
                    },
                ]
        return result
