"""The maintainer turns sampled traces and the wiki's relevant part into page edits in one call: a
reply that does not parse, or whose pages the caller's check refuses, goes back once with the
reasons; after that no output is kept, and a prompt too long for the model fails at once. How the
reply was read is counted (first time, repaired, given up); a call that fails leaves no output
with the reason, never an exception. The call's timeout and the prompt's size follow the speed
the other roles measured on the same server: traces are dropped to fit it, and the budget is said."""

import json
import time

from chatmodels import served_model
from wikiskill.knowledge.wiki_requests import MaintainerOutput, WikiView
from wikiskill.llm.call import CONTEXT_RETRIES
from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.llm.settings import LLMSettings
from wikiskill.llm.speed import SpeedBook
from wikiskill.llm.toolcalls import json_schema
from wikiskill.roles.maintainer import Maintainer
from wikiskill.roles.settings import Role, RoleSettings
from wikiskill.store.traces import Trajectory
from wikiskill.store.trailers import Parsed
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

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


def maintain(replies: list[str], check=lambda output, shown: [], context_window: int | None = None):
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
    def check(output: MaintainerOutput, shown: list[str]) -> list[str]:
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


def test_a_reply_repaired_after_its_parse_error_is_counted_as_repaired():
    result, server = maintain(["no JSON here", reply(pages=[PAGE])])
    assert result.output is not None and result.parsed == Parsed.REPAIRED and result.attempts == 2
    assert "no JSON object found" in server.requests[1]["messages"][-1]["content"]


def test_a_reply_that_parses_at_once_is_counted_as_parsed_first_and_one_that_never_does_as_given_up():
    assert maintain([reply()])[0].parsed == Parsed.FIRST
    assert maintain(["no JSON here", "nor here"])[0].parsed == Parsed.GAVE_UP


def test_the_reply_is_asked_for_with_the_schema_it_is_parsed_with():
    _, server = maintain([reply()])
    sent = server.requests[0]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == json_schema(MaintainerOutput)


def test_a_call_that_times_out_twice_leaves_no_output_with_the_reason_and_raises_nothing():
    with FakeOpenAIServer(lambda body: Reply(content=reply(), delay=1.0)) as server:
        result = Maintainer(paced_model(server, Role.MAINTAINER, SpeedBook(), timeout=0.2)).run(
            1, WIKI, TRACES, 0.5, 1, 2, 4000
        )
    assert result.output is None and result.parsed == Parsed.GAVE_UP and result.attempts == 1
    assert "timed out twice" in result.error and result.transcript.error == result.error


SECONDS_PER_PROMPT_TOKEN = 0.0001


def slow(body):
    """A server that reads a tenth of a millisecond per prompt token (a small model on a CPU)."""
    prompt = sum(len(m.get("content") or "") for m in body["messages"]) // 4
    time.sleep(prompt * SECONDS_PER_PROMPT_TOKEN)
    system = body["messages"][0]["content"]
    content = reply() if system.startswith("You are a Wiki Maintainer Agent") else "ok"
    return Reply(content=content, prompt_tokens=prompt, completion_tokens=1)


def paced_model(server, role: Role, speeds: SpeedBook, timeout: float) -> LiteLLMModel:
    settings = RoleSettings(model="openai/fake-model", api_base=server.base_url, context_window=128_000, max_tokens=8)
    return LiteLLMModel(settings, LLMSettings(retries=0, timeout=timeout), role, Meter(), speeds=speeds)


def long_traces(count: int) -> list[Trajectory]:
    return [
        Trajectory(task_id=f"t{n}", split="train", kind="qa", question="Q?", prediction="word " * 900, score=0.0)
        for n in range(count)
    ]


def measured_by_the_agent(server, speeds: SpeedBook) -> None:
    """The task agent's calls on the same server measure its speed (the first is not measured)."""
    agent = paced_model(server, Role.AGENT, speeds, timeout=0.2)
    for size in (400, 2000, 4000):
        agent.complete([{"role": "user", "content": "x" * size}])


def test_the_maintainers_timeout_grows_with_the_speed_the_agent_measured_on_the_same_server():
    speeds = SpeedBook()
    with FakeOpenAIServer(slow) as server:
        measured_by_the_agent(server, speeds)
        result = Maintainer(paced_model(server, Role.MAINTAINER, speeds, timeout=0.2)).run(
            1, WIKI, long_traces(3), 0.5, 0, 3, 4000
        )
    assert result.error is None and result.parsed == Parsed.FIRST  # about 0.4 s: past the 0.2 s timeout
    notes = result.transcript.turns[0].notes
    assert any(note.startswith("timeout ") and "rather than 0.2s" in note for note in notes), notes
    assert result.budget_note is None and result.shown == ["t0", "t1", "t2"]


def test_a_prompt_the_measured_speed_cannot_read_in_time_is_cut_to_fewer_traces_with_the_budget_said():
    speeds = SpeedBook()
    with FakeOpenAIServer(slow) as server:
        measured_by_the_agent(server, speeds)
        result = Maintainer(paced_model(server, Role.MAINTAINER, speeds, timeout=0.2)).run(
            1, WIKI, long_traces(16), 0.5, 0, 16, 4000
        )
        sent = server.requests[-1]["messages"][-1]["content"]
    assert result.error is None and result.prompt_budget is not None
    assert 1 <= len(result.shown) < 16 and result.shown == [f"t{n}" for n in range(len(result.shown))]
    assert f"cut to {len(result.shown)} of 16 traces" in result.budget_note
    assert f"{result.prompt_budget} prompt tokens" in result.budget_note
    assert sent.count("# Trace t") == len(result.shown)
