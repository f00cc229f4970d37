"""FakeOpenAIServer driven through litellm (and the bare openai client); only 127.0.0.1 traffic.

The exception classes asserted here pin litellm 1.110.2's mapping of provider errors.
Run with `-s` to see the concurrency timing and the per-call CPU figures.
"""

import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # else litellm fetches the cost map from GitHub on import

import asyncio
import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import litellm
import openai
import pytest

from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply  # noqa: E402

litellm.suppress_debug_info = True
MODEL = "openai/fake-model"
NO_RETRY = {"num_retries": 0, "max_retries": 0}  # else the openai SDK inside litellm retries twice


def route(body: dict) -> Reply | str:
    """Pick the reply from the last user message, so one server serves every test."""
    last = body["messages"][-1]["content"]
    replies = {
        "tool": Reply(tool_calls=[{"name": "search", "arguments": {"query": "paris"}}]),
        "429": Reply(status=429, headers={"Retry-After": "7"}, content="slow down"),
        "500": Reply(status=500),
        "503": Reply(status=503),
        "slow": Reply(content="late", delay=2.0),
        "truncate": Reply(content="x" * 200, truncate=True),
        "counted": Reply(content="ok", prompt_tokens=11, completion_tokens=22),
        "tools": Reply(
            content="Looking both up.",
            prompt_tokens=11,
            completion_tokens=22,
            tool_calls=[
                {"name": "search", "arguments": {"query": "paris, the capital of france"}},
                {"name": "skill", "arguments": {"skill": "geography"}},
            ],
        ),
    }
    return replies.get(last, f"echo: {last}")


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer(route) as srv:
        yield srv


def complete(server: FakeOpenAIServer, text: str, **kwargs):
    return litellm.completion(
        model=MODEL,
        api_base=server.base_url,
        api_key="sk-test",
        messages=[{"role": "user", "content": text}],
        **NO_RETRY,
        **kwargs,
    )


def test_content_usage_and_recorded_request(server):
    response = complete(server, "counted")
    assert response.choices[0].message.content == "ok"
    assert response.choices[0].finish_reason == "stop"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens, response.usage.total_tokens) == (11, 22, 33)
    body = server.requests[-1]
    assert body["model"] == "fake-model"  # litellm strips the "openai/" provider prefix
    assert body["messages"] == [{"role": "user", "content": "counted"}]


def test_default_token_estimate(server):
    response = complete(server, "a" * 400)
    assert response.choices[0].message.content == "echo: " + "a" * 400
    assert response.usage.prompt_tokens == 100


def test_tool_call_comes_back_native(server):
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {}}}}]
    response = complete(server, "tool", tools=tools)
    choice = response.choices[0]
    assert choice.finish_reason == "tool_calls"
    call = choice.message.tool_calls[0]
    assert call.id.startswith("call_") and call.type == "function"
    assert call.function.name == "search"
    assert json.loads(call.function.arguments) == {"query": "paris"}
    assert server.requests[-1]["tools"] == tools


def test_429_is_rate_limit_error_with_retry_after(server):
    with pytest.raises(litellm.RateLimitError) as info:
        complete(server, "429")
    exc = info.value
    assert exc.status_code == 429 and "slow down" in str(exc)
    assert exc.response.headers["retry-after"] == "7"
    assert exc.litellm_response_headers["retry-after"] == "7"


def test_500_is_internal_server_error(server):
    with pytest.raises(litellm.InternalServerError) as info:
        complete(server, "500")
    assert info.value.status_code == 500


def test_503_is_service_unavailable_not_internal_server_error(server):
    with pytest.raises(litellm.ServiceUnavailableError) as info:
        complete(server, "503")
    assert info.value.status_code == 503
    assert not isinstance(info.value, litellm.InternalServerError)  # catch both, or openai.APIStatusError
    assert isinstance(info.value, openai.APIStatusError)


def test_read_timeout_is_litellm_timeout(server):
    with pytest.raises(litellm.Timeout) as info:
        complete(server, "slow", timeout=0.5)
    assert isinstance(info.value, openai.APITimeoutError)


def test_truncated_body_is_internal_server_error(server):
    """litellm maps openai.APIConnectionError ("Connection error.") to InternalServerError(500)."""
    with pytest.raises(litellm.InternalServerError) as info:
        complete(server, "truncate")
    assert "Connection error" in str(info.value)
    chain, exc = [], info.value
    while exc is not None:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    assert any(isinstance(e, openai.APIConnectionError) for e in chain)


def test_completion_cost_of_unmapped_model_raises(server):
    response = complete(server, "counted")
    assert response._hidden_params.get("response_cost") is None
    with pytest.raises(litellm.ModelNotMappedError):
        litellm.completion_cost(completion_response=response)


TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
    for name in ("search", "skill")
]
STREAMED = ["counted", "echo this sentence back in several pieces", "tools"]


def summary(message: dict, finish: str, usage: dict | None) -> dict:
    """What a client reads from a reply; call ids are left out (each request gets fresh ones) once checked."""
    calls = message.get("tool_calls") or []
    assert all(call["id"].startswith("call_") and call["type"] == "function" for call in calls)
    return {
        "content": message.get("content") or "",
        "finish": finish,
        "usage": usage,
        "calls": [(call["function"]["name"], json.loads(call["function"]["arguments"])) for call in calls],
    }


def plain(server: FakeOpenAIServer, text: str) -> dict:
    response = complete(server, text, tools=TOOLS).model_dump()
    usage = {k: response["usage"][k] for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    return summary(response["choices"][0]["message"], response["choices"][0]["finish_reason"], usage)


def openai_streamed(server: FakeOpenAIServer, text: str, include_usage: bool) -> dict:
    """The openai SDK's stream, put together the way clients do: content appended, each tool call
    started by a delta with its id and name and its arguments appended by `index`."""
    client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    stream = client.chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": text}],
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": include_usage},
    )
    content, calls, finish, usage, pieces = "", {}, None, None, []
    for chunk in stream:
        assert chunk.object == "chat.completion.chunk"
        if chunk.usage:
            usage = chunk.usage.model_dump(include={"prompt_tokens", "completion_tokens", "total_tokens"})
        for choice in chunk.choices:
            content += choice.delta.content or ""
            pieces.append(choice.delta.content or "")
            finish = choice.finish_reason or finish
            for call in choice.delta.tool_calls or []:
                if call.id:
                    calls[call.index] = {
                        "id": call.id,
                        "type": call.type,
                        "function": {"name": call.function.name, "arguments": ""},
                    }
                calls[call.index]["function"]["arguments"] += call.function.arguments or ""
                pieces.append(call.function.arguments or "")
    texts = [content] + [call["function"]["arguments"] for call in calls.values()]
    longest = max(map(len, texts))
    assert longest < 16 or max(map(len, pieces)) < longest, "a long reply did not stream in pieces"
    return summary({"content": content, "tool_calls": [calls[i] for i in sorted(calls)]}, finish, usage)


def litellm_streamed(server: FakeOpenAIServer, text: str) -> dict:
    chunks = list(complete(server, text, tools=TOOLS, stream=True, stream_options={"include_usage": True}))
    response = litellm.stream_chunk_builder(chunks).model_dump()
    usage = {k: response["usage"][k] for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    return summary(response["choices"][0]["message"], response["choices"][0]["finish_reason"], usage)


@pytest.mark.parametrize("text", STREAMED)
def test_openai_stream_equals_the_plain_reply(server, text):
    expected = plain(server, text)
    assert openai_streamed(server, text, include_usage=True) == expected
    assert openai_streamed(server, text, include_usage=False) == {**expected, "usage": None}
    assert server.requests[-1]["stream"] is True


@pytest.mark.parametrize("text", STREAMED)
def test_litellm_stream_equals_the_plain_reply(server, text):
    assert litellm_streamed(server, text) == plain(server, text)


def test_stream_is_server_sent_events(server):
    body = json.dumps({"model": "fake-model", "stream": True, "messages": [{"role": "user", "content": "tools"}]})
    request = urllib.request.Request(
        server.base_url + "/chat/completions", data=body.encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request) as resp:
        assert resp.headers["Content-Type"] == "text/event-stream"
        events = resp.read().decode().split("\n\n")
    assert events[-2:] == ["data: [DONE]", ""]
    chunks = [json.loads(event.removeprefix("data: ")) for event in events[:-2]]
    assert len({chunk["id"] for chunk in chunks}) == 1
    assert [c["choices"][0]["finish_reason"] for c in chunks] == [None] * (len(chunks) - 1) + ["tool_calls"]
    assert all("usage" not in chunk for chunk in chunks)  # not asked for


def test_stream_errors_stay_json(server):
    with pytest.raises(litellm.RateLimitError) as info:
        complete(server, "429", stream=True)
    assert "slow down" in str(info.value)


def test_acompletion_concurrent():
    n = 8
    with FakeOpenAIServer(lambda body: "hi", latency=0.2) as srv:

        async def run():
            return await asyncio.gather(
                *[
                    litellm.acompletion(
                        model=MODEL,
                        api_base=srv.base_url,
                        api_key="sk-test",
                        messages=[{"role": "user", "content": str(i)}],
                        **NO_RETRY,
                    )
                    for i in range(n)
                ]
            )

        results = asyncio.run(run())
        assert [r.choices[0].message.content for r in results] == ["hi"] * n
        assert sorted(b["messages"][0]["content"] for b in srv.requests) == [str(i) for i in range(n)]


def test_models_endpoint(server):
    with urllib.request.urlopen(server.base_url + "/models") as resp:
        assert json.load(resp)["data"][0]["id"] == "fake-model"


def test_cli_main():
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wikiskill.testing.fakeserver",
            "--port",
            "0",
            "--content",
            "fixed",
            "--completion-tokens",
            "20",
        ],
        cwd=root,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        base_url = proc.stdout.readline().split()[4]  # "fake OpenAI server at http://... (latency 0.0s)"
        client = openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
        response = client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
        assert response.choices[0].message.content == "fixed"
        assert response.usage.completion_tokens == 20
    finally:
        proc.terminate()
        proc.wait(timeout=5)


def test_the_server_started_as_docs_models_md_shows_answers_with_its_script_in_order(tmp_path):
    script = tmp_path / "replies.json"
    finish = {"name": "finish", "arguments": {"proposal": {"action": "no_action", "rationale": "none"}}}
    script.write_text(json.dumps(["first answer", {"tool_calls": [finish]}]))
    command = [sys.executable, "-m", "wikiskill.testing.fakeserver", "--port", "0", "--script", str(script)]
    proc = subprocess.Popen(command, cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE, text=True)
    try:
        base_url = proc.stdout.readline().split()[4]
        client = openai.OpenAI(base_url=base_url, api_key="no-key-needed", max_retries=0)
        answers = [
            client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
            for _ in range(3)
        ]
        assert answers[0].choices[0].message.content == "first answer"
        for answer in answers[1:]:  # the last reply, repeated
            [call] = answer.choices[0].message.tool_calls
            assert call.function.name == "finish" and json.loads(call.function.arguments) == finish["arguments"]
    finally:
        proc.terminate()
        proc.wait(timeout=5)
    assert "--script FILE" in (Path(__file__).resolve().parents[2] / "docs/models.md").read_text()
