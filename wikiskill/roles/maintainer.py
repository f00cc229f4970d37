"""The wiki maintainer: one call that turns sampled traces and the relevant part of the wiki into
page edits. Its prompt is sized to what the server's measured speed answers in the time the call is
allowed (fewer traces, then shorter excerpts); its reply is held to the page model's JSON schema
where the server takes one (`response_format`), and checked by the caller's `check`. A reply that
does not parse, or whose pages are refused, goes back once with the reasons; after that, or when
the call itself fails, the result says why and holds no output: the round goes on with the wiki
unchanged."""

from __future__ import annotations

import json
from collections.abc import Callable

from pydantic import ValidationError

from ..contracts.roles import Check, MaintainerResult, TurnReport
from ..contracts.transcript import Transcript
from ..core.errors import ModelError
from ..core.prompts import render
from ..knowledge.wiki_requests import MaintainerOutput, WikiView
from ..llm.chat import ChatModel, Message, Paced
from ..llm.context import conversation_tokens
from ..llm.jsontext import extract_json
from ..store.traces import Trajectory
from ..store.trailers import Parsed
from .settings import Role

MIN_TRACE_CHARS = 500
"""To fit the measured speed, excerpts are shortened down to this many characters, no further."""


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


def fit_traces(
    prompt: Callable[[list[Trajectory], int], list[Message]], traces: list[Trajectory], max_chars: int, budget: int
) -> tuple[list[Trajectory], int]:
    """The traces and excerpt length whose prompt fits `budget` tokens: the last traces (the
    sample puts failures first) dropped down to one, then the excerpts shortened down to
    `MIN_TRACE_CHARS`; the smallest such prompt when none fits."""
    kept = list(traces)
    while len(kept) > 1 and conversation_tokens(prompt(kept, max_chars)) > budget:
        kept.pop()
    while max_chars > MIN_TRACE_CHARS and conversation_tokens(prompt(kept, max_chars)) > budget:
        max_chars = max(MIN_TRACE_CHARS, max_chars // 2)
    return kept, max_chars


class Maintainer:
    def __init__(self, model: ChatModel, on_turn: TurnReport | None = None):
        self.model = model
        self.on_turn = on_turn

    def run(
        self,
        round_number: int,
        wiki: WikiView,
        traces: list[Trajectory],
        train_score: float,
        passed: int,
        total: int,
        max_chars: int,
        check: Check = lambda output, shown: [],
    ) -> MaintainerResult:
        def prompt(shown: list[Trajectory], chars: int) -> list[Message]:
            return [
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
                        max_chars=chars,
                        traces=[trace.render(chars) for trace in shown],
                    ),
                },
            ]

        budget = self.model.prompt_budget() if isinstance(self.model, Paced) else None
        shown, chars = traces, max_chars
        if budget is not None and conversation_tokens(prompt(traces, max_chars)) > budget:
            shown, chars = fit_traces(prompt, traces, max_chars, budget)
        messages = prompt(shown, chars)
        result = MaintainerResult(None, transcript=Transcript(role=Role.MAINTAINER, messages=messages))
        result.shown = [trace.task_id for trace in shown]
        if (len(shown), chars) != (len(traces), max_chars):
            result.prompt_budget = budget
            result.budget_note = (
                f"the prompt was cut to {len(shown)} of {len(traces)} traces of at most {chars} characters "
                f"(sampling.max_chars {max_chars}) to fit the {budget} prompt tokens the server's measured "
                "speed answers in the time the call is allowed"
            )
        transcript = result.transcript
        for attempt in (1, 2):
            result.attempts = attempt
            try:
                reply = self.model.complete(messages, response_model=MaintainerOutput)
            except ModelError as exc:  # a timeout, an overflow, a server error: the wiki stays as it is
                result.error = transcript.error = str(exc)
                break
            result.usage = result.usage + reply.usage
            if self.on_turn is not None:
                self.on_turn(attempt, result.usage)
            turn = transcript.add_turn(reply.content, reply.usage, reply.notes)
            try:
                output = parse_output(reply.content)
            except ValueError as exc:
                result.error = turn.error = str(exc)
                reasons = [result.error]
            else:
                if result.parsed is None:
                    result.parsed = Parsed.FIRST if attempt == 1 else Parsed.REPAIRED
                result.output, result.error = output, None
                transcript.outcome = output.model_dump()
                reasons = check(output, result.shown)
                if not reasons:
                    return result
                turn.error = "; ".join(reasons)
            if attempt == 1:
                result.retry_reasons = reasons
                messages += [reply.message(), {"role": "user", "content": render("maintainer_retry", reasons=reasons)}]
        if result.output is None:
            result.parsed = Parsed.GAVE_UP
            transcript.error = result.error
        return result
