"""Provider prompt caching: the cached prompt tokens a server reports are read, counted per role
and priced at the cache-read price of litellm's cost map; requests to a provider that caches only
where it is told (Anthropic-style) carry `cache_control` breakpoints, others do not."""

import litellm
import pytest
from typer.testing import CliRunner

from scripted import ScriptedWorld, evolve_through_cli
from wikiskill import api
from wikiskill.cli import app
from wikiskill.history.htmlreport import render_report, report_data
from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.llm.settings import CacheBreakpoints, LLMSettings
from wikiskill.roles.settings import Role, RoleSettings
from wikiskill.store.trailers import Step, Trailers, format_message, role_cached_key
from wikiskill.store.workspace import MAIN
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

PRICED = "openai/gpt-4o-mini"
"""A model in litellm's cost map with a cache-read price below its input price."""
SYSTEM = {"role": "system", "content": "You follow the rules. " * 200}
PATH = {"type": "object", "properties": {"path": {"type": "string"}}}
TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": PATH}}]


def model(
    server: FakeOpenAIServer,
    name: str = "openai/fake-model",
    meter: Meter | None = None,
    breakpoints: CacheBreakpoints = CacheBreakpoints.AUTO,
) -> LiteLLMModel:
    return LiteLLMModel(
        RoleSettings(model=name, api_base=server.base_url),
        LLMSettings(retries=0, timeout=10, cache_breakpoints=breakpoints),
        Role.PROPOSER,
        meter or Meter(),
    )


def turns(count: int) -> list[list[dict]]:
    """The requests of a conversation that grows by one question and answer a turn."""
    messages, out = [SYSTEM], []
    for turn in range(count):
        messages = [*messages, {"role": "user", "content": f"question {turn}: " + "details " * 100}]
        out.append(messages)
        messages = [*messages, {"role": "assistant", "content": f"answer {turn}"}]
    return out


def price(usage) -> float:
    info = litellm.get_model_info(PRICED)
    uncached = usage.prompt_tokens - usage.cached_tokens
    return (
        uncached * info["input_cost_per_token"]
        + usage.cached_tokens * info["cache_read_input_token_cost"]
        + usage.completion_tokens * info["output_cost_per_token"]
    )


def test_cached_prompt_tokens_are_read_counted_per_role_and_priced_at_the_cache_read_price():
    meter = Meter()
    with FakeOpenAIServer(lambda body: Reply(content="ok", completion_tokens=3), prompt_cache="prefix") as server:
        chat = model(server, PRICED, meter)
        first, second = (chat.complete(messages) for messages in turns(2))
    assert first.usage.cached_tokens == 0
    assert 0 < second.usage.cached_tokens < second.usage.prompt_tokens
    assert second.usage.cost_usd == pytest.approx(price(second.usage), rel=1e-6)
    assert second.usage.cost_usd < price(second.usage.model_copy(update={"cached_tokens": 0}))
    assert meter.by_role[Role.PROPOSER].cached_tokens == second.usage.cached_tokens


@pytest.mark.parametrize("stream", [False, True])
def test_the_fake_server_reports_the_tokens_of_the_longest_prefix_it_has_seen(stream):
    def cached(messages: list[dict]) -> int:
        kwargs = {"stream": True, "stream_options": {"include_usage": True}} if stream else {}
        response = litellm.completion(
            model="openai/fake-model", api_base=server.base_url, api_key="x", messages=messages, **kwargs
        )
        if stream:
            response = litellm.stream_chunk_builder(list(response), messages=messages)
        return response.usage.prompt_tokens_details.cached_tokens

    with FakeOpenAIServer(lambda body: "ok", prompt_cache="prefix") as server:
        first, second, third = turns(3)
        assert cached(first) == 0
        assert cached(second) == len(SYSTEM["content"] + first[1]["content"]) // 4
        assert cached([SYSTEM, {"role": "user", "content": "another question"}]) == len(SYSTEM["content"]) // 4
        assert cached(third) == len(SYSTEM["content"] + "".join(m["content"] for m in second[1:])) // 4


def test_an_anthropic_model_gets_breakpoints_on_the_system_prompt_and_the_last_message():
    with FakeOpenAIServer(lambda body: "ok", prompt_cache="prefix") as server:
        messages = turns(2)[1]
        request = model(server, "anthropic/claude-sonnet-4-5").call(messages, TOOLS).request
        plain = model(server, "openai/gpt-4o").call(messages, TOOLS).request
    marked = [index for index, message in enumerate(request["messages"]) if isinstance(message["content"], list)]
    assert marked == [0, len(messages) - 1]
    for index in marked:
        part = request["messages"][index]["content"][0]
        assert part == {"type": "text", "text": messages[index]["content"], "cache_control": {"type": "ephemeral"}}
    assert plain["messages"] == messages  # OpenAI caches a repeated prefix without marks
    assert messages[0] == SYSTEM  # the conversation itself is never changed


def test_marked_breakpoints_reach_the_server_and_a_marking_provider_caches_only_with_them():
    def cached_share(breakpoints: CacheBreakpoints) -> tuple[int, list[dict]]:
        with FakeOpenAIServer(lambda body: "ok", prompt_cache="marked") as server:
            chat = model(server, breakpoints=breakpoints)
            usage = [chat.complete(messages).usage for messages in turns(3)]
        return sum(u.cached_tokens for u in usage), server.requests[-1]["messages"]

    cached, sent = cached_share(CacheBreakpoints.ALWAYS)
    assert cached > 0
    assert [index for index, m in enumerate(sent) if isinstance(m["content"], list)] == [0, len(sent) - 1]
    assert sent[-1]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert cached_share(CacheBreakpoints.OFF)[0] == 0


def test_cached_tokens_per_role_are_a_trailer_that_reads_back():
    trailers = Trailers(round=1, step=Step.PROPOSE)
    setattr(trailers, role_cached_key(Role.PROPOSER), "1200")
    message = format_message("r1 propose", trailers)
    assert "Wikiskill-Cached-Proposer: 1200" in message.splitlines()
    assert Trailers.parse({"Wikiskill-Cached-Proposer": "1200", "Wikiskill-Tokens-Proposer": "3000"}).role_cached == {
        "proposer": 1200
    }


def test_a_round_records_cached_tokens_per_role_and_status_and_the_report_show_them(tmp_path):
    ws = tmp_path / "ws"
    with FakeOpenAIServer(ScriptedWorld(), prompt_cache="prefix") as server:
        evolve_through_cli(CliRunner(), ws, server.base_url, rounds=1)
    workspace = api.open_workspace(ws)
    propose = next(c for c in workspace.log(MAIN, first_parent=False) if c.meta.step == Step.PROPOSE)
    assert propose.meta.role_cached["proposer"] > 0  # each turn resends the conversation so far
    status = api.status(workspace)
    proposer = status.by_role["proposer"]
    assert 0 < proposer.cached_tokens < proposer.tokens
    assert set(status.by_role) == {"agent", "maintainer", "proposer"}
    output = CliRunner().invoke(app, ["-C", str(ws), "status"]).output
    assert f"proposer    ${proposer.cost_usd:.4f}, {proposer.tokens} tokens ({proposer.cached_tokens} cached)" in output
    html = render_report(report_data(workspace), "ws")
    roles = html[html.index('<table id="roles">') :]
    assert "<td>proposer</td>" in roles and f'<td class="score">{proposer.cached_tokens}</td>' in roles
