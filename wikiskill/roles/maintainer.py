"""The wiki maintainer: one call that turns sampled traces and the relevant part of the wiki into
page edits. Its reply is checked against the page model by the caller's `check`; refused pages
get one retry with the reasons."""

from __future__ import annotations

import json

from pydantic import ValidationError

from ..contracts.roles import Check, MaintainerResult
from ..contracts.transcript import Transcript
from ..core.config import Role
from ..core.errors import ContextOverflow
from ..core.prompts import render
from ..knowledge.wiki_requests import MaintainerOutput, WikiView
from ..llm.chat import ChatModel
from ..llm.jsontext import extract_json
from ..store.traces import Trajectory


def output_schema() -> str:
    """The reply's JSON schema, generated from the model, as the prompt shows it."""
    return json.dumps(MaintainerOutput.model_json_schema(), indent=1)


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
    """One retry, with the parse error or the reasons pages were refused; after that a reply that
    does not parse fails the step (wiki unchanged), and refused pages are not written."""

    def __init__(self, model: ChatModel):
        self.model = model

    def run(
        self,
        round_number: int,
        wiki: WikiView,
        traces: list[Trajectory],
        train_score: float,
        passed: int,
        total: int,
        max_chars: int,
        check: Check = lambda output: [],
    ) -> MaintainerResult:
        messages = [
            {"role": "system", "content": render("maintainer_system", schema=output_schema())},
            {
                "role": "user",
                "content": render(
                    "maintainer_user",
                    round=round_number,
                    train_score=train_score,
                    passed=passed,
                    total=total,
                    index=wiki.index,
                    log=wiki.log,
                    pages=wiki.pages,
                    max_chars=max_chars,
                    traces=[trace.render(max_chars) for trace in traces],
                ),
            },
        ]
        result = MaintainerResult(None, transcript=Transcript(role=Role.MAINTAINER, messages=messages))
        transcript = result.transcript
        for attempt in (1, 2):
            result.attempts = attempt
            try:
                reply = self.model.complete(messages, response_model=MaintainerOutput)
            except ContextOverflow as exc:
                result.error = transcript.error = str(exc)
                return result
            result.usage = result.usage + reply.usage
            turn = transcript.add_turn(reply.content, reply.usage, reply.notes)
            try:
                output = parse_output(reply.content)
            except ValueError as exc:
                result.error = turn.error = str(exc)
                reasons = [result.error]
            else:
                result.output, result.error = output, None
                transcript.outcome = output.model_dump()
                reasons = check(output)
                if not reasons:
                    return result
                turn.error = "; ".join(reasons)
            if attempt == 1:
                result.retry_reasons = reasons
                messages += [reply.message(), {"role": "user", "content": render("maintainer_retry", reasons=reasons)}]
        if result.output is None:
            transcript.error = result.error
        return result
