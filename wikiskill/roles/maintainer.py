"""The wiki maintainer: one call that turns sampled traces and the current wiki into wiki edits."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import ContextOverflow
from ..llm import ChatModel, extract_json
from ..prompts import render
from ..traces import Trajectory, Usage
from ..transcript import Transcript


class PageCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str
    content: str


class PageUpdate(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str
    edits: list


class MaintainerOutput(BaseModel):
    """The maintainer's JSON reply. Unknown keys are ignored; the two strings are required."""

    model_config = ConfigDict(extra="ignore")
    create_patterns: list[PageCreate] = []
    update_patterns: list[PageUpdate] = []
    update_index: str
    append_log: str


@dataclass
class WikiView:
    """The whole current wiki as the maintainer sees it."""

    index: str
    log: str
    pages: dict[str, str]


@dataclass
class MaintainerResult:
    output: MaintainerOutput | None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    attempts: int = 0
    transcript: Transcript = field(default_factory=lambda: Transcript(role="maintainer"))


def parse_output(text: str | None) -> MaintainerOutput:
    """Parse the reply; raise ValueError with a message the model can act on."""
    try:
        data = extract_json(text)
    except RecursionError:  # the json module recurses once per nesting level
        raise ValueError("the JSON is nested too deeply") from None
    if not isinstance(data, dict):
        raise ValueError("the reply must be one JSON object")
    try:
        return MaintainerOutput.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'object'}: {e['msg']}" for e in exc.errors()[:5])
        raise ValueError(f"the JSON object does not match the schema: {problems}") from exc


class Maintainer:
    """Retries once with the parse error; after that the round's maintain step is recorded as failed."""

    def __init__(self, model: ChatModel):
        self.model = model

    def run(self, round_number: int, wiki: WikiView, traces: list[Trajectory], train_score: float,
            passed: int, total: int, max_chars: int) -> MaintainerResult:
        messages = [
            {"role": "system", "content": render("maintainer_system")},
            {"role": "user", "content": render(
                "maintainer_user", round=round_number, train_score=train_score, passed=passed, total=total,
                index=wiki.index, log=wiki.log, pages=wiki.pages, max_chars=max_chars,
                traces=[trace.render(max_chars) for trace in traces],
            )},
        ]
        usage = Usage()
        error = None
        transcript = Transcript(role="maintainer", messages=messages)
        for attempt in (1, 2):
            try:
                reply = self.model.complete(messages, response_model=MaintainerOutput)
            except ContextOverflow as exc:
                transcript.error = str(exc)
                return MaintainerResult(None, error=str(exc), usage=usage, attempts=attempt, transcript=transcript)
            usage = usage + reply.usage
            turn = transcript.add_turn(reply.content, reply.usage, reply.notes)
            try:
                output = parse_output(reply.content)
            except ValueError as exc:
                error = turn.error = str(exc)
                messages += [
                    reply.message(),
                    {"role": "user", "content": f"Your reply could not be used: {error}. "
                     "Reply again with only the JSON object."},
                ]
                continue
            transcript.outcome = output.model_dump()
            return MaintainerResult(output, usage=usage, attempts=attempt, transcript=transcript)
        transcript.error = error
        return MaintainerResult(None, error=error, usage=usage, attempts=2, transcript=transcript)
