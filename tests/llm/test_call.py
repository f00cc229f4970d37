"""One model call (`llm/call.py`), made by LiteLLMModel against the local fake server: the text
tool protocol and `auto`'s fallbacks, response_format schemas, fitting into the context window
and the server's measured speed, and errors that are final at once (authentication, unknown
model, bad request), retried once (a timeout), backed off (a provider that is down or limits the
rate) or raised as ProviderUnavailable once the provider stays down."""

import asyncio

import pytest

from wikiskill.core.errors import ContextOverflow, ModelError, ProviderUnavailable
from wikiskill.knowledge.wiki_requests import MaintainerOutput
from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.llm.settings import LLMSettings
from wikiskill.roles.proposer import TOOLS
from wikiskill.roles.settings import RoleSettings, StructuredOutput, ToolProtocol
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

MESSAGES = [{"role": "system", "content": "You help."}, {"role": "user", "content": "List the wiki."}]
CALL = {"name": "list_files", "arguments": {"path": "wiki"}}


@pytest.fixture()
def no_backoff(monkeypatch):
    monkeypatch.setattr("wikiskill.llm.call.random.random", lambda: -0.5)  # backoff delays of zero


def model(server: FakeOpenAIServer, retries: int = 2, timeout: float = 10, **settings) -> LiteLLMModel:
    role = RoleSettings(model="openai/fake-model", api_base=server.base_url, **settings)
    return LiteLLMModel(role, LLMSettings(retries=retries, timeout=timeout), "proposer", Meter())


def test_a_native_call_stays_native_in_auto():
    with FakeOpenAIServer(lambda body: Reply(tool_calls=[CALL])) as server:
        chat = model(server)
        reply = chat.complete(MESSAGES, TOOLS)
        chat.complete(
            MESSAGES
            + [reply.message(), {"role": "tool", "tool_call_id": reply.tool_calls[0].id, "content": "wiki/index.md"}],
            TOOLS,
        )
    assert [c.name for c in reply.tool_calls] == ["list_files"] and reply.tool_calls[0].arguments == {"path": "wiki"}
    assert chat.protocol == ToolProtocol.AUTO
    assert all("tools" in body for body in server.requests)
    assert server.requests[1]["messages"][-1]["role"] == "tool"


def test_auto_switches_to_text_once_the_model_writes_its_call_as_text():
    with FakeOpenAIServer(lambda body: Reply(tool_calls=[CALL]), text_tools=True) as server:
        chat = model(server)
        first = chat.complete(MESSAGES, TOOLS)
        second = chat.complete(
            MESSAGES
            + [first.message(), {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "wiki/index.md"}],
            TOOLS,
        )
    assert first.tool_calls[0].name == "list_files" and first.tool_calls[0].arguments == {"path": "wiki"}
    assert any("the text tool protocol from now on" in note for note in first.notes)
    assert chat.protocol == ToolProtocol.TEXT and second.tool_calls[0].name == "list_files"
    later = server.requests[1]
    assert "tools" not in later
    assert "# Tools" in later["messages"][0]["content"] and '"path"' in later["messages"][0]["content"]
    assert [m["role"] for m in later["messages"]] == ["system", "user", "assistant", "user"]
    assert later["messages"][-1]["content"].startswith("Result of list_files:\nwiki/index.md")


def test_a_required_call_under_the_text_protocol_is_held_to_the_calls_schema():
    with FakeOpenAIServer(lambda body: Reply(tool_calls=[CALL]), text_tools=True) as server:
        chat = model(server)
        first = chat.complete(MESSAGES, TOOLS, call_required=True)
        chat.complete(MESSAGES, TOOLS, call_required=True)
        chat.complete(MESSAGES, TOOLS)
    assert first.tool_calls[0].name == "list_files"
    assert "response_format" not in server.requests[0]  # native tools were offered first
    schema = server.requests[1]["response_format"]["json_schema"]["schema"]
    names = [option["properties"]["name"]["const"] for option in schema["anyOf"]]
    assert names == ["read_file", "list_files", "finish"]
    assert "response_format" not in server.requests[2]  # a reply that may be prose is not constrained


def test_auto_switches_to_text_when_a_required_call_comes_back_as_prose():
    with FakeOpenAIServer(lambda body: "I would read the wiki first.") as server:
        chat = model(server)
        reply = chat.complete(MESSAGES, TOOLS, call_required=True)
    assert reply.tool_calls == [] and chat.protocol == ToolProtocol.TEXT


def test_native_protocol_never_parses_text():
    with FakeOpenAIServer(lambda body: Reply(tool_calls=[CALL]), text_tools=True) as server:
        reply = model(server, tool_protocol=ToolProtocol.NATIVE).complete(MESSAGES, TOOLS)
    assert reply.tool_calls == [] and "list_files" in reply.content


def test_a_server_that_rejects_tools_gets_the_text_protocol():
    def handler(body):
        if "tools" in body:
            return Reply(status=500, content="tools param requires --jinja flag")
        return Reply(tool_calls=[CALL])

    with FakeOpenAIServer(handler, text_tools=True) as server:
        chat = model(server)
        reply = chat.complete(MESSAGES, TOOLS)
    assert reply.tool_calls[0].name == "list_files" and chat.protocol == ToolProtocol.TEXT
    assert len(server.requests) == 2 and "tools" not in server.requests[1]


def test_the_maintainer_schema_goes_as_response_format_and_a_rejection_drops_it():
    def handler(body):
        if "response_format" in body:
            return Reply(status=400, content="response_format is not supported")
        return "{}"

    with FakeOpenAIServer(handler) as server:
        chat = model(server)
        chat.complete(MESSAGES, response_model=MaintainerOutput)
        chat.complete(MESSAGES, response_model=MaintainerOutput)
    sent = server.requests[0]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "MaintainerOutput"
    assert set(sent["json_schema"]["schema"]["required"]) == {"append_log"}
    assert "$defs" not in str(sent) and "$ref" not in str(sent)
    assert [("response_format" in body) for body in server.requests] == [True, False, False]
    assert chat.structured == StructuredOutput.OFF


@pytest.mark.parametrize("refused", ["tools", "response_format"])
def test_calls_in_flight_on_one_model_settle_on_the_same_form_when_the_server_refuses_one(refused):
    """The tasks of an eval share one model. Two calls sent at once in `auto`, both refused for the
    same part, both settle on the form without it and get their replies; neither fails because the
    other settled first, and every later request is in the settled form."""

    def handler(body):
        if refused in body:
            return Reply(status=400, content=f"{refused} is not supported", delay=0.5)  # both are in flight
        return Reply(tool_calls=[CALL]) if refused == "tools" else "{}"

    async def two_tasks(chat):
        if refused == "tools":
            return await asyncio.gather(chat.acomplete(MESSAGES, TOOLS), chat.acomplete(MESSAGES, TOOLS))
        return await asyncio.gather(
            chat.acomplete(MESSAGES, response_model=MaintainerOutput),
            chat.acomplete(MESSAGES, response_model=MaintainerOutput),
        )

    with FakeOpenAIServer(handler, text_tools=refused == "tools") as server:
        chat = model(server, retries=0)
        replies = asyncio.run(two_tasks(chat))
        later = (
            chat.complete(MESSAGES, TOOLS)
            if refused == "tools"
            else chat.complete(MESSAGES, response_model=MaintainerOutput)
        )
    assert [refused in body for body in server.requests] == [True, True, False, False, False]
    if refused == "tools":
        assert chat.protocol == ToolProtocol.TEXT
        assert [reply.tool_calls[0].name for reply in [*replies, later]] == ["list_files"] * 3
    else:
        assert chat.structured == StructuredOutput.OFF
        assert [reply.content for reply in [*replies, later]] == ["{}"] * 3
    assert all(any(f"the server rejected {refused}" in note for note in reply.notes) for reply in replies)


def test_response_format_off_is_never_sent():
    with FakeOpenAIServer(lambda body: "{}") as server:
        model(server, response_format=StructuredOutput.OFF).complete(MESSAGES, response_model=MaintainerOutput)
    assert "response_format" not in server.requests[0]


def test_a_long_conversation_is_fitted_into_the_context_window():
    history = list(MESSAGES)
    for number in range(6):
        history += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"c{number}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": f"c{number}", "content": f"trace {number} " + "x" * 6000},
        ]
    with FakeOpenAIServer(lambda body: "done") as server:
        reply = model(server, context_window=4096).complete(history, TOOLS)
    sent = server.requests[0]
    total = sum(len(m.get("content") or "") for m in sent["messages"])
    assert total < 4096 * 3  # characters: the estimate is pessimistic
    assert sent["max_tokens"] == 1024  # a quarter of the window for a model litellm does not know
    contents = [m["content"] for m in sent["messages"] if m["role"] == "tool"]
    assert "shortened to fit the context window" in contents[0] and contents[0].startswith("trace 0")
    assert contents[-1].startswith("trace 5")
    assert any("shortened" in note for note in reply.notes)
    assert history[3]["content"].endswith("x" * 100)  # the caller's conversation is untouched


def test_a_system_prompt_that_cannot_fit_is_named_in_one_line():
    with FakeOpenAIServer(lambda body: "done") as server:
        with pytest.raises(
            ContextOverflow,
            match=r"proposer.s request does not fit its context window: "
            r"system prompt \d+ tokens \+ tools 0 tokens",
        ):
            model(server, context_window=1024).complete(
                [{"role": "system", "content": "rule " * 3000}, {"role": "user", "content": "go"}]
            )
    assert server.requests == []


def test_a_server_reported_overflow_is_retried_smaller():
    def handler(body):
        if sum(len(m.get("content") or "") for m in body["messages"]) > 12_000:
            return Reply(status=400, content="the request exceeds the available context size, try increasing it")
        return "fits"

    with FakeOpenAIServer(handler) as server:
        reply = model(server).complete([{"role": "system", "content": "s"}, {"role": "user", "content": "y" * 15_000}])
    sizes = [len(body["messages"][1]["content"]) for body in server.requests]
    assert reply.content == "fits" and sizes[0] == 15_000
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes) and sizes[-1] <= 12_000
    assert any("context overflow" in note for note in reply.notes)


def test_a_timeout_is_retried_once_with_twice_the_time_then_the_provider_is_unavailable():
    with FakeOpenAIServer(lambda body: Reply(content="late", delay=1.0)) as server:
        with pytest.raises(ProviderUnavailable, match="timed out twice") as info:
            model(server, retries=4, timeout=0.3).complete(MESSAGES)
    assert len(server.requests) == 2
    assert "\n" not in str(info.value)


def test_a_timeout_then_an_answer_succeeds():
    replies = [Reply(content="late", delay=1.0), Reply(content="ok")]
    with FakeOpenAIServer(lambda body: replies.pop(0)) as server:
        reply = model(server, timeout=0.3).complete(MESSAGES)
    assert reply.content == "ok" and any("twice the time" in note for note in reply.notes)


def test_a_provider_that_stays_down_raises_provider_unavailable(no_backoff):
    with FakeOpenAIServer(lambda body: Reply(status=503)) as server:
        with pytest.raises(ProviderUnavailable, match="gave up after 3 attempts"):
            model(server, retries=2).complete(MESSAGES)
    assert len(server.requests) == 3


def recorded_sleeps(monkeypatch, jitter: float) -> list[float]:
    """The seconds the model waits between attempts, recorded instead of slept; `jitter` is the
    random draw each backoff is scaled by (0.5 + jitter)."""
    recorded: list[float] = []
    monkeypatch.setattr("wikiskill.llm.call.random.random", lambda: jitter)
    monkeypatch.setattr("wikiskill.llm.model.time.sleep", recorded.append)
    return recorded


def test_the_backoff_doubles_from_half_a_second_and_stops_growing_at_thirty(monkeypatch):
    sleeps = recorded_sleeps(monkeypatch, jitter=0.5)
    with FakeOpenAIServer(lambda body: Reply(status=503)) as server:
        with pytest.raises(ProviderUnavailable, match="gave up after 8 attempts"):
            model(server, retries=7).complete(MESSAGES)
    assert len(server.requests) == 8
    assert sleeps == [0.5, 1, 2, 4, 8, 16, 30]


def test_a_retry_after_of_more_than_a_minute_is_waited_for_one_minute(monkeypatch):
    sleeps = recorded_sleeps(monkeypatch, jitter=-0.5)
    replies = [Reply(status=429, headers={"Retry-After": "600"}, content="slow down"), Reply(content="ok")]
    with FakeOpenAIServer(lambda body: replies.pop(0)) as server:
        reply = model(server).complete(MESSAGES)
    assert reply.content == "ok" and len(server.requests) == 2
    assert sleeps == [60.0]


@pytest.mark.parametrize(
    ("status", "message", "advice"),
    [
        (401, "Incorrect API key provided", "OPENAI_API_KEY"),
        (403, "not allowed", "may not use this model"),
        (404, "The model `nope` does not exist", "`proposer.model`"),
        (400, "unknown field frobnicate", "frobnicate"),
    ],
)
def test_errors_retrying_cannot_fix_fail_at_once_with_what_to_fix(status, message, advice, no_backoff):
    with FakeOpenAIServer(lambda body: Reply(status=status, content=message)) as server:
        with pytest.raises(ModelError) as info:
            model(server, retries=4).complete(MESSAGES)
    assert len(server.requests) == 1
    assert advice in str(info.value) and "\n" not in str(info.value)
    assert not isinstance(info.value, ProviderUnavailable)


def test_a_slow_servers_measured_speed_keeps_requests_within_the_timeout():
    import time

    def slow(body):  # prompt processing at a quarter of a second per 1,000 tokens, as on a small CPU
        prompt = sum(len(m.get("content") or "") for m in body["messages"]) // 4
        time.sleep(prompt / 4000)
        return Reply(content="ok", prompt_tokens=prompt, completion_tokens=1)

    def conversation(*sizes: int) -> list[dict]:
        return [
            {"role": "system", "content": "You help."},
            *({"role": "user" if n % 2 == 0 else "assistant", "content": "x" * size} for n, size in enumerate(sizes)),
        ]

    huge = conversation(*[1500] * 8, 1500)  # about 3,400 tokens: fits the window, not the time
    with FakeOpenAIServer(slow) as server:
        chat = model(server, timeout=1.0, max_tokens=16)
        first = chat.complete(huge)  # nothing measured yet (a first call pays the client's set-up)
        chat.complete(conversation(800))
        chat.complete(conversation(4000))
        fitted = chat.complete(huge)
    sizes = [sum(len(m["content"]) for m in body["messages"]) for body in server.requests]
    assert sizes[0] == sum(len(m["content"]) for m in huge)
    assert sizes[3] < sizes[0] * 0.7  # cut to what half the timeout allows
    assert not any("measured speed" in note for note in first.notes)
    assert any("the server's measured speed" in note for note in fitted.notes)


def test_a_slow_servers_long_reply_gets_a_timeout_sized_from_its_measured_speed():
    import re
    import time

    def generating(body):  # 5 ms per token generated, as on a small CPU; the prompt says how many
        tokens = int(re.search(r"write (\d+)", body["messages"][-1]["content"]).group(1))
        time.sleep(tokens * 0.005)
        return Reply(content="ok", prompt_tokens=len(body["messages"][-1]["content"]), completion_tokens=tokens)

    with FakeOpenAIServer(generating) as server:
        chat = model(server, retries=0, timeout=1.0, max_tokens=400)
        for tokens, padding in ((10, 0), (20, 100), (40, 300)):  # the first call is not measured; each well inside 1 s
            chat.complete([{"role": "user", "content": f"write {tokens} " + "x" * padding}])
        reply = chat.complete([{"role": "user", "content": "write 360"}])  # 1.8 s: past the 1 s timeout
    assert reply.content == "ok" and len(server.requests) == 4  # neither timed out nor retried
    assert any("the server's measured speed gives this request" in note for note in reply.notes)


def test_a_system_prompt_longer_than_the_measured_speed_allows_is_sent_whole_not_failed():
    import time

    def slow(body):
        prompt = sum(len(m.get("content") or "") for m in body["messages"]) // 4
        time.sleep(prompt / 4000)
        return Reply(content="ok", prompt_tokens=prompt, completion_tokens=1)

    with FakeOpenAIServer(slow) as server:
        chat = model(server, timeout=2.0, max_tokens=16)
        for size in (400, 800, 4000):  # the first call is not measured
            chat.complete([{"role": "user", "content": "x" * size}])
        big_system = [{"role": "system", "content": "s" * 12000}, {"role": "user", "content": "u" * 4000}]
        reply = chat.complete(big_system)
    assert sum(len(m["content"]) for m in server.requests[-1]["messages"]) == 16000
    assert any("less than the request's fixed part" in note for note in reply.notes)
