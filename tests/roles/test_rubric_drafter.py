"""The rubric drafter reads a real session and drafts what a judge should check: criteria cleaned
of empty ones and runs of spaces, one retry with the reason a reply could not be used, and a
session too long for the model, or a call that fails, leaves no draft with the reason."""

import json

from chatmodels import served_model
from wikiskill.llm.call import CONTEXT_RETRIES
from wikiskill.roles.rubric_drafter import RubricDrafter
from wikiskill.store.traces import Trajectory
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

SESSION = Trajectory(
    task_id="s1",
    split="ingested",
    kind="session",
    question="Make the date parser accept ISO weeks.",
    messages=[
        {"role": "user", "content": "Make the date parser accept ISO weeks."},
        {"role": "assistant", "content": "Added parse_week() with tests for 2024-W01."},
        {"role": "user", "content": "Looks good, merged."},
    ],
)


def draft(replies: list[str], context_window: int | None = None):
    answers = iter(replies)
    with FakeOpenAIServer(lambda body: next(answers), context_window=context_window) as server:
        result = RubricDrafter(served_model(server, "proposer")).draft("Accept ISO weeks.", SESSION)
    return result, server


def rubric(*criteria: str) -> str:
    return json.dumps({"accepted": "parse_week() with tests", "criteria": list(criteria)})


def test_the_draft_holds_the_criteria_cleaned_and_the_session_was_shown():
    result, server = draft([rubric("  parse_week   handles 2024-W01 ", "   ", "tests cover week 53")])
    assert result.error is None and result.draft.accepted == "parse_week() with tests"
    assert result.draft.criteria == ["parse_week handles 2024-W01", "tests cover week 53"]
    prompt = server.requests[0]["messages"][-1]["content"]
    assert "Accept ISO weeks." in prompt and "Looks good, merged." in prompt
    assert result.usage.calls == 1


def test_a_reply_that_cannot_be_used_is_sent_back_once_with_the_reason():
    result, server = draft([rubric("   "), rubric("parse_week handles 2024-W01")])
    assert result.draft.criteria == ["parse_week handles 2024-W01"] and result.error is None
    assert "Your reply could not be used: every criterion is empty." in server.requests[1]["messages"][-1]["content"]


def test_two_replies_that_cannot_be_used_leave_no_draft_and_the_last_reason():
    result, server = draft(["no JSON", json.dumps({"accepted": "x", "criteria": []})])
    assert result.draft is None and len(server.requests) == 2
    assert result.error.startswith("the JSON object does not match the schema: criteria")


def test_a_session_too_long_for_the_model_fails_without_a_retry():
    result, server = draft([rubric("x")], context_window=100)
    assert result.draft is None and "ContextWindowExceededError" in result.error
    assert len(server.overflows) == len(server.requests)
    assert len(server.requests) == CONTEXT_RETRIES + 1  # one call: the model's own shrinking retries


def test_a_call_that_fails_leaves_no_draft_with_the_reason_rather_than_an_exception():
    with FakeOpenAIServer(lambda body: Reply(status=503, content="the model is loading")) as server:
        result = RubricDrafter(served_model(server, "proposer")).draft("Accept ISO weeks.", SESSION)
    assert result.draft is None and "the model is loading" in result.error
