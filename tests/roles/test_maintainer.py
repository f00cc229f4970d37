"""The maintainer turns sampled traces and the wiki's relevant part into page edits in one call: a
reply that does not parse, or whose pages the caller's check refuses, goes back once with the
reasons; after that no output is kept, and a prompt too long for the model fails at once."""

import json

from chatmodels import served_model
from wikiskill.knowledge.wiki_requests import MaintainerOutput, WikiView
from wikiskill.llm.call import CONTEXT_RETRIES
from wikiskill.roles.maintainer import Maintainer
from wikiskill.store.traces import Trajectory
from wikiskill.testing.fakeserver import FakeOpenAIServer

WIKI = WikiView(index="# Index\n- [Unit slips](patterns/unit-slips.md): grams and kilograms mixed\n", log="", pages={})
TRACES = [
    Trajectory(task_id="t7", split="train", kind="qa", question="How many grams in 2 kg?", prediction="20"),
]
PAGE = {
    "name": "unit-slips",
    "title": "Unit slips",
    "summary": "grams and kilograms mixed",
    "evidence": ["t7"],
    "content": "## Description\nAnswers mix units.\n\n## Root cause\nNo conversion.\n\n## Evidence\nt7: 20\n\n## Fix\n"
    "Convert first.\n",
}


def reply(log: str = "Round 1: unit slips.", pages: list[dict] | None = None) -> str:
    return json.dumps({"create_patterns": pages or [], "append_log": log})


def maintain(replies: list[str], check=lambda output: [], context_window: int | None = None):
    answers = iter(replies)
    with FakeOpenAIServer(lambda body: next(answers), context_window=context_window) as server:
        result = Maintainer(served_model(server, "maintainer")).run(
            1, WIKI, TRACES, train_score=0.5, passed=1, total=2, max_chars=4000, check=check
        )
    return result, server


def test_a_reply_the_check_accepts_is_the_output_after_one_call_shown_the_traces_and_the_index():
    result, server = maintain([reply(pages=[PAGE])])
    assert result.error is None and result.attempts == 1 and result.retry_reasons == []
    assert isinstance(result.output, MaintainerOutput) and result.output.create_patterns[0].name == "unit-slips"
    assert result.transcript.outcome == result.output.model_dump()
    prompt = server.requests[0]["messages"][-1]["content"]
    assert "How many grams in 2 kg?" in prompt and "[Unit slips](patterns/unit-slips.md)" in prompt


def test_pages_the_check_refuses_go_back_once_with_the_reasons():
    def check(output: MaintainerOutput) -> list[str]:
        return ["unit-slips: cites task ids it was not shown: t9"] if "t9" in output.append_log else []

    result, server = maintain([reply(log="Seen in t9."), reply(log="Seen in t7.")], check)
    requests = server.requests
    assert result.attempts == 2 and result.error is None and result.output.append_log == "Seen in t7."
    assert result.retry_reasons == ["unit-slips: cites task ids it was not shown: t9"]
    assert "cites task ids it was not shown: t9" in requests[1]["messages"][-1]["content"]
    assert requests[1]["messages"][-2]["content"] == reply(log="Seen in t9.")


def test_two_replies_that_do_not_parse_leave_no_output_and_say_why():
    result, server = maintain(["no JSON here", json.dumps({"create_patterns": []})])
    assert len(server.requests) == 2 and result.output is None and result.attempts == 2
    assert "append_log: Field required" in result.error and result.transcript.error == result.error
    assert result.retry_reasons == ["no JSON object found"]


def test_a_prompt_too_long_for_the_model_fails_without_a_retry():
    result, server = maintain([reply()], context_window=200)
    assert result.output is None and result.attempts == 1 and len(server.overflows) == len(server.requests)
    assert len(server.requests) == CONTEXT_RETRIES + 1  # one call: the model's own shrinking retries
    assert "ContextWindowExceededError" in result.error and result.transcript.error == result.error
