"""Long tool-using sessions against a model litellm does not know, so its default window of 8,192
tokens applies, served by a fake server that refuses a request longer than that window as OpenAI
does: the oldest tool turns give way (a call always with its results, an omission line in their
place), and a task that still cannot fit fails alone with the sizes in its result row."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from scripted import SPELL, ScriptedWorld, create
from wikiskill import api
from wikiskill.benchmarks.bfcl import Bfcl
from wikiskill.benchmarks.bfcl_family import BfclFamily
from wikiskill.cli import app
from wikiskill.core.errors import ContextOverflow
from wikiskill.llm.context import OMITTED_TURNS, conversation_tokens, fit_messages
from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.llm.profile import DEFAULT_CONTEXT_WINDOW
from wikiskill.llm.settings import LLMSettings
from wikiskill.roles.settings import RoleSettings, ToolProtocol
from wikiskill.testing.fakeserver import FakeOpenAIServer
from wikiskill.testing.fakeserver import Reply as ServerReply

UNKNOWN_MODEL = "openai/fake-model"
OMITTED = re.compile(re.escape(OMITTED_TURNS).replace(re.escape("{count}"), r"(\d+)"))
READ_TOOL = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a workspace file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
}


def omitted(messages: list[dict]) -> int:
    """How many tool turns the omission lines of a request say were dropped."""
    return sum(
        int(count) for m in messages if isinstance(m.get("content"), str) for count in OMITTED.findall(m["content"])
    )


def assert_calls_and_results_pair(messages: list[dict]) -> None:
    """Every call is answered right after it and every result answers a call: what providers demand."""
    open_calls: list[str] = []
    for message in messages:
        if message["role"] == "tool":
            assert open_calls and message["tool_call_id"] == open_calls.pop(0), "a result without its call"
            continue
        assert not open_calls, "a call without its result"
        open_calls = [call["id"] for call in message.get("tool_calls") or []]
    assert not open_calls


@pytest.mark.parametrize("protocol", [ToolProtocol.NATIVE, ToolProtocol.TEXT], ids=["native", "text"])
def test_two_hundred_tool_turns_fit_the_default_window_with_the_oldest_dropped_whole(protocol):
    system = {"role": "system", "content": "You are a careful reader. " * 30}
    task = {"role": "user", "content": "# Task\nFind which page names the failing pattern."}
    turns = []
    for number in range(200):
        calls = 2 if number % 5 == 0 else 1
        ids = [f"call-{number}", f"call-{number}-again"][:calls]
        read = {"name": "read_file", "arguments": json.dumps({"path": f"wiki/page-{number}.md"})}
        results = [f"page {number}: " + "words " * 150, "the same page again"][:calls]
        turns.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "type": "function", "function": read} for call_id in ids],
            }
        )
        turns += [
            {"role": "tool", "tool_call_id": call_id, "content": result}
            for call_id, result in zip(ids, results, strict=True)
        ]
    conversation = [system, task, *turns]
    with FakeOpenAIServer(lambda body: "page 7", context_window=DEFAULT_CONTEXT_WINDOW) as server:
        chat = LiteLLMModel(
            RoleSettings(model=UNKNOWN_MODEL, api_base=server.base_url, tool_protocol=protocol),
            LLMSettings(),
            "proposer",
            Meter(),
        )
        reply = chat.complete(conversation, [READ_TOOL])
    assert chat.context_window == DEFAULT_CONTEXT_WINDOW
    assert reply.content == "page 7" and server.overflows == [] and len(server.requests) == 1
    sent = server.requests[0]["messages"]
    assert sent[0]["content"].startswith(system["content"]) and sent[1]["content"].startswith(task["content"])
    dropped = omitted(sent)
    shown = re.findall(r"page (\d+): ", json.dumps(sent))
    assert dropped > 100 and shown[-1] == "199"
    assert [int(number) for number in shown] == list(range(dropped, 200))
    assert any(f"{dropped} oldest tool turn(s) dropped" in note for note in reply.notes)
    if protocol == ToolProtocol.NATIVE:
        assert_calls_and_results_pair(sent)
        assert sent[2]["role"] == "user" and omitted(sent[2:3]) == dropped
        assert sent[-2]["tool_calls"] == turns[-2]["tool_calls"] and sent[-1] == turns[-1]
    assert len(conversation) == 442 and conversation[2] == turns[0]  # the caller's conversation is untouched


class LongReader(ScriptedWorld):
    """The proposer reads 60 traces, one a turn, counting the turns it was told were omitted, then
    proposes the skill that fixes every task; the task agent answers right only with that skill."""

    READS = 60

    def answer(self, system: str, question: str) -> str:
        return f"<answer>{'right' if SPELL in system else 'wrong'}</answer>"

    def propose(self, messages: list[dict]) -> ServerReply:
        reads = omitted(messages) + sum(1 for m in messages if m["role"] == "assistant")
        if reads < self.READS:
            return ServerReply(tool_calls=[{"name": "read_file", "arguments": {"path": f"traces/t{reads:02d}"}}])
        return ServerReply(tool_calls=[{"name": "finish", "arguments": {"proposal": create("spell-letters", SPELL)}}])


def long_suite(folder, train: int):
    folder.mkdir()
    for split, count in (("train", train), ("val", 2), ("test", 1)):
        rows = [
            {
                "id": f"{split[0]}{n:02d}",
                "question": f"Task {n}: " + "Answer with the word right. " * 50,
                "answer": "right",
            }
            for n in range(count)
        ]
        (folder / f"{split}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


def test_a_proposer_that_reads_sixty_traces_reaches_a_proposal_in_the_default_window(tmp_path):
    suite = long_suite(tmp_path / "suite", train=64)
    with FakeOpenAIServer(LongReader(), context_window=DEFAULT_CONTEXT_WINDOW) as server:
        ws = api.init_workspace(
            tmp_path / "ws", benchmark=f"jsonl:{suite}", model=UNKNOWN_MODEL, api_base=server.base_url, concurrency=4
        )
        config = ws.root / "wikiskill.yaml"
        text = config.read_text()
        assert "  max_turns: 20\n" in text
        config.write_text(text.replace("  max_turns: 20\n", "  max_turns: 64\n"))
        evolved = api.evolve(ws, 1)
    assert evolved.decisions == ["accepted"] and server.overflows == []
    transcript = json.loads((ws.root / "raw/r001/proposer.json").read_text())
    calls = [call for turn in transcript["turns"] for call in turn["calls"]]
    assert [call["name"] for call in calls] == ["read_file"] * LongReader.READS + ["finish"]
    assert len({call["arguments"]["path"] for call in calls[:-1]}) == LongReader.READS
    notes = [note for turn in transcript["turns"] for note in turn["notes"]]
    assert any("oldest tool turn(s) dropped" in note for note in notes)


class GroundTruthCaller:
    """A BFCL agent that makes each user turn's ground-truth calls, then says it is done. It finds
    its task by the first user message and the turn by the user messages that are not results or
    omission lines, so it plays right only if fitting kept the task and every user turn."""

    def __init__(self, bench: Bfcl):
        self.reference = {task.question: bench.reference_calls(task) for task in bench.tasks("val")}

    def __call__(self, body: dict) -> ServerReply | str:
        messages = body["messages"]
        said = [m["content"] for m in messages if m["role"] == "user" and not OMITTED.fullmatch(m["content"])]
        if messages[-1]["role"] == "tool":
            return "Done."
        calls = self.reference[said[0]][len(said) - 1]
        return ServerReply(tool_calls=[{"name": call.name, "arguments": call.arguments} for call in calls])


def bfcl_eval(tmp_path, config_lines: str = "") -> tuple[FakeOpenAIServer, str, dict[str, dict]]:
    """`wikiskill eval --split val` of 4 BFCL tasks against the default window: the server, the
    command's output and the result rows."""
    bench = Bfcl(("base",), {"train": 1, "val": 4, "test": 1}, spec=BfclFamily.spec, name="bfcl")
    with FakeOpenAIServer(GroundTruthCaller(bench), context_window=DEFAULT_CONTEXT_WINDOW) as server:
        ws = api.init_workspace(
            tmp_path / "ws",
            benchmark="bfcl:base",
            model=UNKNOWN_MODEL,
            api_base=server.base_url,
            train=1,
            val=4,
            test=1,
            concurrency=2,
        )
        config = ws.root / "wikiskill.yaml"
        text = config.read_text()
        assert "\nagent:\n" in text
        config.write_text(text.replace("\nagent:\n", f"\nagent:\n{config_lines}"))
        result = CliRunner().invoke(app, ["-C", str(ws.root), "eval", "--split", "val"])
        assert result.exit_code == 0, result.output
        requests = len(server.requests)
        rows = {trajectory.task_id: trajectory.outcome() for trajectory in api.evaluate(ws, "val").runs[0]}
        assert len(server.requests) == requests  # every row, a failed one too, was cached
    assert list(rows) == [task.id for task in bench.tasks("val")]
    return server, " ".join(result.output.split()), rows


def test_a_bfcl_eval_in_the_default_window_scores_every_task(tmp_path):
    server, output, rows = bfcl_eval(tmp_path)
    assert {task_id: (row["score"], row["error"]) for task_id, row in rows.items()} == {
        task_id: (1.0, None) for task_id in rows
    }
    assert server.overflows == [] and any(omitted(body["messages"]) for body in server.requests)
    # multi_turn_base_15's 35 functions alone outgrow 8192 tokens less the default 2048 for the reply
    assert {body.get("max_tokens") for body in server.requests} == {2048, 512}
    assert "mean score 1.000 (4/4 solved)" in output


def test_bfcl_tasks_that_cannot_fit_fail_alone_with_the_sizes_in_their_rows(tmp_path):
    server, output, rows = bfcl_eval(tmp_path, "  max_tokens: 2048\n")
    failed = {task_id: row["error"] for task_id, row in rows.items() if row["error"]}
    assert {task_id: row["score"] for task_id, row in rows.items()} == {
        task_id: 0.0 if task_id in failed else 1.0 for task_id in rows
    }
    assert sorted(failed) == ["multi_turn_base_15", "multi_turn_base_181"] and server.overflows == []
    for task_id, error in failed.items():
        assert re.fullmatch(
            r"the agent's request does not fit its context window: system prompt \d+ tokens "
            r"\+ tools \d{4} tokens \+ \d+ message\(s\) \d+ tokens kept \(the task and the latest "
            r"turn.*\) > 6144 prompt tokens \(a context window of 8192 less 2048 kept for the reply\): "
            r".*",
            error,
        )
        assert f"{task_id}: {error}" in output
    assert "mean score 0.500 (2/4 solved)" in output


def test_a_server_with_a_smaller_window_than_configured_refuses_and_the_request_is_retried_smaller():
    conversation = [{"role": "system", "content": "You summarise."}, {"role": "user", "content": "# Task\nSummarise."}]
    for number in range(40):
        read = {"name": "read_file", "arguments": json.dumps({"path": f"p{number}"})}
        conversation += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"call-{number}", "type": "function", "function": read}],
            },
            {"role": "tool", "tool_call_id": f"call-{number}", "content": "words " * 150},
        ]
    with FakeOpenAIServer(lambda body: "short", context_window=DEFAULT_CONTEXT_WINDOW) as server:
        chat = LiteLLMModel(
            RoleSettings(model=UNKNOWN_MODEL, api_base=server.base_url, context_window=16384, max_tokens=1000),
            LLMSettings(),
            "proposer",
            Meter(),
        )
        reply = chat.complete(conversation, [READ_TOOL])
    refused = server.overflows
    assert reply.content == "short" and len(refused) == len(server.requests) - 1 >= 1
    assert any("the server reported a context overflow" in note for note in reply.notes)
    assert_calls_and_results_pair(server.requests[-1]["messages"])


def test_a_server_that_refuses_even_the_shrunk_request_fails_with_the_sizes_it_was_sent():
    conversation = [{"role": "system", "content": "rule " * 2000}, {"role": "user", "content": "go"}]
    with FakeOpenAIServer(lambda body: "never", context_window=1024) as server:
        chat = LiteLLMModel(
            RoleSettings(model=UNKNOWN_MODEL, api_base=server.base_url, context_window=16384),
            LLMSettings(),
            "maintainer",
            Meter(),
        )
        with pytest.raises(ContextOverflow) as failure:
            chat.complete(conversation)
    assert len(server.overflows) == len(server.requests) == 3
    assert re.search(
        r"still too long after shrinking it 2 times, to system prompt \d{4} tokens \+ tools 0 tokens "
        r"\+ 1 message\(s\) \d+ tokens of a 16384-token window: set `maintainer.context_window`",
        str(failure.value),
    )


def test_a_section_cut_twice_says_how_many_characters_were_cut_in_all():
    pages = "".join(f"# page {name}\n" + name * 10_000 + "\n" for name in "ab")
    fitted = fit_messages([{"role": "system", "content": "s"}, {"role": "user", "content": pages}], 600)
    first, second = (int(re.search(r"cut to (\d+) characters", note).group(1)) for note in fitted.notes)
    assert first == 2000 > second and conversation_tokens(fitted.messages) <= 600
    kept = re.findall(r"# page \w\n(\w+)\n\[\.\.\. +(\d+) characters cut", fitted.messages[1]["content"])
    assert [len(text) + int(cut) for text, cut in kept] == [10_001, 10_001]  # each body and its newline
