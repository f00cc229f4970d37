"""FakeOpenAIServer speaks the Anthropic Messages API, the Responses API and the Gemini API on top
of its one chat handler: each request reaches the handler as a chat-completions body, and the
handler's reply comes back streamed in that API's own events (real HTTP on 127.0.0.1; the
Responses API is read by the openai SDK itself)."""

import json
import urllib.error
import urllib.request

import openai
import pytest

from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

CALL = {"name": "lookup", "arguments": {"query": "paris", "limit": 3}}
TOOL = {
    "name": "lookup",
    "description": "Look a thing up.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
}


def route(body: dict) -> Reply | str:
    """A call on the first turn, the tool's result echoed once it is back; `fail` gets a 429."""
    messages = body["messages"]
    if any(m["role"] == "user" and m["content"] == "fail" for m in messages):
        return Reply(status=429, content="slow down")
    tool = next((m for m in messages if m["role"] == "tool"), None)
    if tool is None:
        return Reply(content="Looking it up.", tool_calls=[CALL])
    return f"The tool said {tool['content']} (for call {tool['tool_call_id']})."


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer(route) as srv:
        yield srv


def post(server: FakeOpenAIServer, path: str, body: dict) -> tuple[int, str, str]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.port}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read().decode()


def sse(text: str) -> list[tuple[str | None, dict]]:
    """(event name, data) of each Server-Sent Event."""
    found = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in lines:
            found.append((lines.get("event"), json.loads(lines["data"])))
    return found


def test_the_messages_api_streams_text_and_a_tool_use_block_that_reassemble(server):
    body = {
        "model": "claude-x",
        "max_tokens": 100,
        "stream": True,
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "find paris"}]}],
        "tools": [
            {"name": "lookup", "description": "Look a thing up.", "input_schema": TOOL["parameters"]},
            {"type": "web_search_20250305", "name": "web_search"},
        ],
    }
    status, kind, text = post(server, "/v1/messages?beta=true", body)
    assert (status, kind) == (200, "text/event-stream")
    events = sse(text)
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert all(name == data["type"] for name, data in events)
    blocks: dict[int, dict] = {}
    for name, data in events:
        if name == "content_block_start":
            blocks[data["index"]] = {**data["content_block"], "json": ""}
        elif name == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                blocks[data["index"]]["text"] += delta["text"]
            else:
                blocks[data["index"]]["json"] += delta["partial_json"]
    assert sum(name == "content_block_delta" for name in names) > 3  # streamed in pieces
    assert blocks[0]["text"] == "Looking it up."
    assert blocks[1]["name"] == "lookup" and json.loads(blocks[1]["json"]) == CALL["arguments"]
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    seen = server.requests[-1]
    assert seen["messages"][:2] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "find paris"},
    ]
    assert [tool["function"]["name"] for tool in seen["tools"]] == ["lookup"]  # server tools are not functions


def test_a_messages_api_tool_result_reaches_the_handler_as_a_tool_message(server):
    body = {
        "model": "claude-x",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "find paris"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hm"},
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": 1}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "a city"}]}
                ],
            },
        ],
    }
    status, kind, text = post(server, "/v1/messages", body)
    assert (status, kind) == (200, "application/json")
    answer = json.loads(text)
    assert answer["content"] == [{"type": "text", "text": "The tool said a city (for call toolu_1)."}]
    assert answer["stop_reason"] == "end_turn" and answer["usage"]["output_tokens"] > 0
    assistant = server.requests[-1]["messages"][1]
    assert assistant["content"] == "Looking."
    assert assistant["tool_calls"][0]["function"] == {"name": "lookup", "arguments": '{"q": 1}'}


def test_the_responses_api_streams_what_the_openai_sdk_reassembles(server):
    client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    tools = [{"type": "function", **TOOL}, {"type": "web_search"}]
    stream = client.responses.create(
        model="fake-model", instructions="Be brief.", input="find paris", tools=tools, stream=True
    )
    events = list(stream)
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    assert sum(event.type == "response.function_call_arguments.delta" for event in events) > 3
    assert [event.sequence_number for event in events] == list(range(len(events)))
    message, call = events[-1].response.output
    assert message.content[0].text == "Looking it up."
    assert (call.type, call.name, json.loads(call.arguments)) == ("function_call", "lookup", CALL["arguments"])
    assert events[-1].response.usage.output_tokens > 0
    seen = server.requests[-1]
    assert seen["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "find paris"}]

    again = client.responses.create(
        model="fake-model",
        input=[
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": "find paris"},
            {"type": "function_call", "call_id": call.call_id, "name": "lookup", "arguments": call.arguments},
            {"type": "function_call_output", "call_id": call.call_id, "output": "a city"},
        ],
    )
    assert again.output_text == f"The tool said a city (for call {call.call_id})."
    system, user, assistant, tool = server.requests[-1]["messages"]
    assert (system["role"], user["role"], tool["role"]) == ("system", "user", "tool")
    assert assistant["tool_calls"][0]["id"] == tool["tool_call_id"] == call.call_id


def test_the_gemini_api_streams_chunks_and_pairs_a_function_response_with_its_call(server):
    contents = [{"role": "user", "parts": [{"text": "find paris"}]}]
    body = {
        "contents": contents,
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "tools": [
            {
                "functionDeclarations": [
                    {"name": "lookup", "description": "Look a thing up.", "parametersJsonSchema": TOOL["parameters"]}
                ]
            }
        ],
    }
    status, kind, text = post(server, "/v1beta/models/gemini-x:streamGenerateContent?alt=sse", body)
    assert (status, kind) == (200, "text/event-stream")
    chunks = [data for _, data in sse(text)]
    parts = [part for chunk in chunks for part in chunk["candidates"][0]["content"]["parts"]]
    assert "".join(part.get("text", "") for part in parts) == "Looking it up."
    assert [part["functionCall"] for part in parts if "functionCall" in part] == [
        {"name": "lookup", "args": CALL["arguments"]}
    ]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP" and chunks[-1]["usageMetadata"]["totalTokenCount"]
    assert server.requests[-1]["model"] == "gemini-x"

    contents += [
        {
            "role": "model",
            "parts": [
                {"text": "Looking.", "thought": True},
                {"functionCall": {"name": "lookup", "args": {"query": "paris"}}},
            ],
        },
        {"role": "user", "parts": [{"functionResponse": {"name": "lookup", "response": {"output": "a city"}}}]},
    ]
    status, kind, text = post(server, "/v1beta/models/gemini-x:generateContent", {**body, "contents": contents})
    answer = json.loads(text)["candidates"][0]["content"]["parts"]
    assert (status, answer) == (200, [{"text": "The tool said a city (for call call_1)."}])


@pytest.mark.parametrize(
    ("path", "shape"),
    [
        ("/v1/messages", {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
        (
            "/v1/responses",
            {"error": {"message": "slow down", "type": "rate_limit_error", "param": None, "code": "rate_limit_error"}},
        ),
        (
            "/v1beta/models/m:streamGenerateContent",
            {"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}},
        ),
    ],
)
def test_a_scripted_error_comes_back_in_each_apis_error_shape(server, path, shape):
    body = {
        "messages": [{"role": "user", "content": "fail"}],
        "input": "fail",
        "contents": [{"role": "user", "parts": [{"text": "fail"}]}],
        "stream": True,
    }
    status, kind, text = post(server, path, body)
    assert (status, kind, json.loads(text)) == (429, "application/json", shape)


def test_an_unknown_path_is_still_a_404(server):
    status, _, text = post(server, "/v1/nothing-here", {})
    assert status == 404 and "no route POST /v1/nothing-here" in text
