"""The `bfcl` suite: BFCL's ground-truth calls score 1 through BFCL's own checker, doing nothing
scores 0, and a scripted model that makes those calls over the wire (native or text tool
protocol) gets the same verdicts through init, one evolve round and eval."""

from __future__ import annotations

import json
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scripted import ScriptedWorld
from wikiskill import api
from wikiskill.benchmarks import BenchmarkKind, FunctionCall, registry
from wikiskill.benchmarks.bfcl import Bfcl, entry_pools
from wikiskill.benchmarks.bfcl_family import BfclFamily
from wikiskill.benchmarks.reference import play_calls, play_reference
from wikiskill.core.errors import BenchmarkError, ConfigError
from wikiskill.store.settings import load_config
from wikiskill.store.traces import Trajectory
from wikiskill.testing.fakeserver import FakeOpenAIServer
from wikiskill.testing.fakeserver import Reply as ServerReply

TOOL_AGENT_SYSTEM = "You are an assistant that serves a user by calling functions"


def suite(*categories: str, train: int = 1, val: int = 1, test: int = 1) -> Bfcl:
    return Bfcl(categories, {"train": train, "val": val, "test": test}, spec=BfclFamily.spec, name="bfcl")


def test_the_ground_truth_calls_score_one_and_a_silent_agent_scores_zero():
    bench = suite("base", "miss_func", val=2)
    tasks = bench.tasks("val")
    assert [task.metadata["category"] for task in tasks] == ["base", "miss_func"]
    for task in tasks:
        reference = bench.reference_calls(task)
        assert play_calls(bench, task, reference) == play_reference(bench, task) == 1.0
        assert play_calls(bench, task, [[] for _ in reference]) == 0.0
        half = [calls[: len(calls) // 2] for calls in reference]
        assert play_calls(bench, task, half) == 0.0


def test_a_conversation_cut_short_fails_even_with_the_right_calls():
    bench = suite("base")
    task = bench.tasks("test")[0]
    session = bench.open_session(task)
    for turn, calls in enumerate(bench.reference_calls(task)):
        session.execute(turn, calls)
    assert session.score(len(session.user_turns) - 1) == 0.0
    session.close()


def test_splits_are_disjoint_entry_numbers_and_fixed():
    pools = {split: set(map(str, pool)) for split, pool in entry_pools().items()}
    bench = suite("base", "long_context", train=4, val=4, test=4)
    numbers = {split: {task.id.rsplit("_", 1)[1] for task in bench.tasks(split)} for split in ("train", "val", "test")}
    for split, taken in numbers.items():
        assert taken and taken <= pools[split], split
    for one, other in combinations(("train", "val", "test"), 2):
        assert not pools[one] & pools[other] and not numbers[one] & numbers[other], (one, other)
    assert [t.id for t in bench.tasks("train")] == [t.id for t in suite("base", "long_context", train=4).tasks("train")]


def test_the_missed_function_arrives_with_its_turn():
    bench = suite("miss_func")
    session = bench.open_session(bench.tasks("train")[0])
    late = [(index, turn) for index, turn in enumerate(session.user_turns) if turn.added_tools]
    assert late, "a miss_func entry holds a function back"
    index, turn = late[0]
    name = turn.added_tools[0]["function"]["name"]
    assert name not in {tool["function"]["name"] for tool in session.tools}
    early = session.execute(0, [FunctionCall(name, {})])
    assert early == [f"Error during execution: no function named {name!r} is available."]
    session.close()


def test_calls_that_are_not_plain_literal_calls_are_refused_without_running():
    bench = suite("base")
    session = bench.open_session(bench.tasks("train")[0])
    name = session.tools[0]["function"]["name"]
    results = session.execute(
        0,
        [FunctionCall("__import__", {"name": "os"}), FunctionCall(name, None), FunctionCall(name, {"x) or exit(": 1})],
    )
    assert results[0].startswith("Error during execution: no function named '__import__'")
    assert results[1] == "Error during execution: the arguments are not a JSON object."
    assert "invalid argument name" in results[2]
    assert session.steps == [[] for _ in session.user_turns]
    session.close()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=40, deadline=None)
@given(
    name=st.text(max_size=20),
    arguments=st.one_of(st.none(), st.dictionaries(st.text(max_size=10), json_values, max_size=4)),
)
def test_any_call_a_model_writes_gets_one_result_and_never_raises(name, arguments):
    bench = suite("base")
    session = bench.open_session(bench.tasks("train")[0])
    try:
        known = session.tools[0]["function"]["name"]
        results = session.execute(0, [FunctionCall(name, arguments), FunctionCall(known, arguments)])
        assert len(results) == 2 and all(isinstance(result, str) for result in results)
    finally:
        session.close()


def test_categories_are_checked_and_named_as_bfcl_names_them(tmp_path):
    assert registry.spec_of("bfcl").kind is BenchmarkKind.TOOL_USE
    assert registry.canonical_name("bfcl:multi_turn_miss-param") == "bfcl:miss_param"
    with pytest.raises(BenchmarkError, match="unknown BFCL category 'web_search'"):
        registry.resolve("bfcl:web_search")
    with pytest.raises(ConfigError, match="offline model cannot play bfcl"):
        api.init_workspace(tmp_path / "ws", benchmark="bfcl:base")


class GroundTruthWorld(ScriptedWorld):
    """The task agent makes each turn's ground-truth calls in one reply, then says it is done;
    on the val tasks it calls nothing, so there is something left for a round to improve."""

    def __init__(self, bench: Bfcl):
        super().__init__()
        self.reference = {
            task.question: bench.reference_calls(task) for split in ("train", "test") for task in bench.tasks(split)
        }
        self.reference |= {task.question: [[] for _ in bench.reference_calls(task)] for task in bench.tasks("val")}

    def __call__(self, body: dict):
        messages = body["messages"]
        if not messages[0]["content"].startswith(TOOL_AGENT_SYSTEM):
            return super().__call__(body)
        said = [m["content"] for m in messages if m["role"] == "user" and not m["content"].startswith("Result of ")]
        last = messages[-1]
        if last["role"] == "tool" or last["content"].startswith("Result of "):
            return "Done."
        calls = self.reference[said[0]][len(said) - 1]
        if not calls:
            return "I cannot do that with the functions I have."
        return ServerReply(tool_calls=[{"name": call.name, "arguments": call.arguments} for call in calls])


@pytest.mark.parametrize("text_tools", [False, True], ids=["native", "text"])
def test_bfcl_is_initialised_evolved_and_evaluated_against_the_scripted_server(tmp_path, text_tools):
    with FakeOpenAIServer(GroundTruthWorld(suite("base", train=2, val=1, test=1)), text_tools=text_tools) as server:
        ws = api.init_workspace(
            tmp_path / "ws",
            benchmark="bfcl:base",
            model="openai/fake-model",
            api_base=server.base_url,
            train=2,
            val=1,
            test=1,
            concurrency=1,
        )
        config = ws.root / "wikiskill.yaml"
        config.write_text(config.read_text().replace("agent:\n", "agent:\n  context_window: 32768\n"))
        assert load_config(ws.root).agent.context_window == 32768
        evolved = api.evolve(ws, 1)
        result = api.evaluate(ws, "test")
    assert evolved.rounds_completed == 1
    assert result.evaluation.mean == 1.0
    trace = json.loads((ws.root / "raw/r001/train" / f"{suite('base').tasks('train')[0].id}.json").read_text())
    assert trace["kind"] == "tool_use" and trace["score"] == 1.0
    calls = [call for m in trace["messages"] if m["role"] == "assistant" for call in m.get("tool_calls") or []]
    results = [m for m in trace["messages"] if m["role"] == "tool"]
    assert calls and len(results) == len(calls) == len([r for r in results if r["content"]])
    shown = Trajectory.model_validate(trace).render()
    first = calls[0]["function"]
    assert f"-> {first['name']}({first['arguments']})" in shown and results[0]["content"] in shown
