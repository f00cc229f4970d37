"""The proposer's conversation does not grow without need: past `kept_results_tokens`, the tool
results it has already answered go to the model as stubs naming the call that reads them again,
in blocks, so each turn's prompt stays near flat while its prefix (what a provider's prompt cache
reads back) changes only once a block; the transcript keeps every result whole."""

import json

import pytest

from wikiskill.contracts.roles import ProposerContext
from wikiskill.llm.context import conversation_tokens, stub_used_results
from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.llm.settings import LLMSettings
from wikiskill.roles.proposer import Proposer
from wikiskill.roles.settings import RoleSettings
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

CONTEXT = ProposerContext(round=1, incumbent=0.5, train_score=0.5)
TRACE_CHARS = 4000
PROPOSAL = {"action": "no_action", "rationale": "nothing to fix"}


class Library:
    """Train traces of TRACE_CHARS characters each, every one different."""

    def read(self, path):
        if path.startswith(("traces/", "wiki/")):
            return f"# {path}\n" + f"{path} step. " * (TRACE_CHARS // (len(path) + 7)), path.startswith("traces/")
        raise LookupError(f"no file {path!r}")

    def list(self, path):
        return []


def reader(paths: list[str]):
    """A proposer model that reads `paths` one a turn, then finishes."""

    def handler(body: dict) -> Reply:
        turn = sum(1 for message in body["messages"] if message["role"] == "assistant")
        if turn < len(paths):
            return Reply(tool_calls=[{"name": "read_file", "arguments": {"path": paths[turn]}}])
        return Reply(tool_calls=[{"name": "finish", "arguments": {"proposal": PROPOSAL}}])

    return handler


def propose(paths: list[str], kept: int | None, meter: Meter | None = None, prompt_cache: str = "off"):
    with FakeOpenAIServer(reader(paths), prompt_cache=prompt_cache) as server:
        model = LiteLLMModel(
            RoleSettings(model="openai/fake-model", api_base=server.base_url, context_window=128_000),
            LLMSettings(retries=0),
            "proposer",
            meter or Meter(),
        )
        result = Proposer(model, Library(), max_turns=20, min_trace_reads=1, kept_results_tokens=kept).run(CONTEXT)
    return result, server.requests


TWELVE = [f"traces/t{index:02d}" for index in range(12)]


def test_stubbing_keeps_the_prompt_per_turn_bounded_while_the_transcript_keeps_every_result():
    stubbed, sent = propose(TWELVE, kept=3000)
    whole, grown = propose(TWELVE, kept=None)
    assert stubbed.proposal == whole.proposal == PROPOSAL and stubbed.reads == whole.reads == TWELVE
    sizes = [conversation_tokens(request["messages"]) for request in sent]
    first, trace = sizes[0], TRACE_CHARS / 3.2
    assert max(sizes) < first + 3000 + 2 * trace  # the budget plus the newest result
    assert max(conversation_tokens(request["messages"]) for request in grown) > first + 11 * trace
    kept = stubbed.transcript.messages
    assert [message["content"] for message in kept] == [message["content"] for message in whole.transcript.messages]
    assert sum(message["role"] == "tool" and len(message["content"]) >= TRACE_CHARS for message in kept) == 12
    stubs = [m["content"] for m in sent[-1]["messages"] if m["role"] == "tool" and m["content"].startswith("[This")]
    assert len(stubs) >= 8 and 'call read_file with {"path": "traces/t00"} to see it again' in stubs[0]


def test_stubs_come_in_blocks_so_the_prefix_sent_changes_only_once_a_block():
    stubbed, grown = Meter(), Meter()
    _, sent = propose(TWELVE, kept=3000, meter=stubbed, prompt_cache="prefix")
    propose(TWELVE, kept=None, meter=grown, prompt_cache="prefix")
    rewritten = [
        turn
        for turn, (before, after) in enumerate(zip(sent, sent[1:], strict=False), 1)
        if after["messages"][: len(before["messages"])] != before["messages"]
    ]
    assert 1 <= len(rewritten) <= 4  # 12 reads of ~1250 tokens past a 3000-token budget: a block every 3 turns
    assert len({json.dumps([request["tools"], request["messages"][:2]]) for request in sent}) == 1  # never rewritten
    uncached = {
        name: meter.total.prompt_tokens - meter.total.cached_tokens
        for name, meter in (("stubbed", stubbed), ("grown", grown))
    }
    assert stubbed.total.prompt_tokens < 0.5 * grown.total.prompt_tokens
    assert stubbed.total.cached_tokens > 0.5 * stubbed.total.prompt_tokens  # the cache still reads most of each prompt
    assert uncached["stubbed"] < 1.5 * uncached["grown"]


def test_a_stubbed_result_read_again_is_shown_again_and_is_no_repeated_call():
    paths = ["wiki/index.md", *TWELVE[:5], "wiki/index.md", "traces/t00", "traces/t06"]
    result, sent = propose(paths, kept=3000)
    answers = [m["content"] for m in result.transcript.messages if m["role"] == "tool"]
    assert answers[6] == answers[0]  # the page again, whole
    assert answers[7] == answers[1].split("\n\n[")[0]  # the trace again, whole
    assert len(sent[8]["tools"]) == 3  # not cut down to `finish` as after a repeated call
    assert result.reads == paths and result.proposal == PROPOSAL


def test_a_result_still_shown_read_again_is_refused_as_before():
    result, _ = propose(["traces/t00", "traces/t00"], kept=3000)
    answers = [m["content"] for m in result.transcript.messages if m["role"] == "tool"]
    assert answers[1].startswith("You have read traces/t00 already.")


@pytest.mark.parametrize("budget", [0, 500, 2000])
def test_stubbing_never_changes_the_conversation_and_never_hides_the_newest_results(budget):
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    for turn in range(6):
        call = {
            "id": f"c{turn}",
            "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": f"p{turn}"})},
        }
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{turn}", "content": "x" * 3000},
        ]
    copy = json.loads(json.dumps(messages))
    view, ids = stub_used_results(messages, budget)
    assert messages == copy and view[-1] == messages[-1] and "c5" not in ids
    assert [m for m in view if m["role"] != "tool"] == [m for m in messages if m["role"] != "tool"]
