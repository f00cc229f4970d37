"""Tool calls written as text, JSON found in prose, and conversations fitted into a context window:
any hostile text is survived, and every well-formed call is found however it is wrapped."""

import json
import re
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wikiskill.contracts.roles import ProposerContext
from wikiskill.core.errors import ContextOverflow
from wikiskill.knowledge.proposals import InvalidProposal, prepare_proposal
from wikiskill.knowledge.skills import skill_problems
from wikiskill.llm.chat import Reply, ToolCall
from wikiskill.llm.context import conversation_tokens, fit_messages
from wikiskill.llm.jsontext import extract_json
from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.llm.settings import LLMSettings
from wikiskill.llm.toolcalls import as_text_conversation, describe_tools, parse_text_calls
from wikiskill.roles.proposer import TOOLS, Proposer
from wikiskill.roles.settings import RoleSettings
from wikiskill.testing.fakeserver import FakeOpenAIServer

NAMES = {"read_file", "list_files", "finish"}
CONTEXT = ProposerContext(round=1, incumbent=0.5, train_score=0.5)
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
arguments = st.dictionaries(st.text(max_size=10), json_value, max_size=4)
WRAPPERS = [
    "{call}",
    "I will read it.\n{call}",
    "```json\n{call}\n```",
    "Thinking first.\n```\n{call}\n```\nThen I wait.",
    "<tool_call>\n{call}\n</tool_call>",
    "Sure! {call} Let me know.",
]


@PROPERTY
@given(name=st.sampled_from(sorted(NAMES)), args=arguments, wrapper=st.sampled_from(WRAPPERS))
def test_a_call_is_found_however_it_is_wrapped(name, args, wrapper):
    text = wrapper.format(call=json.dumps({"name": name, "arguments": args}))
    calls = parse_text_calls(text, NAMES)
    assert [(call.name, call.arguments) for call in calls] == [(name, args)]


@PROPERTY
@given(
    text=st.text(max_size=300) | st.sampled_from(["{" * 5000, '{"name": "finish", "arguments": ' * 300, "```json\n{"])
)
def test_hostile_text_never_raises(text):
    for call in parse_text_calls(text, NAMES):
        assert isinstance(call.name, str) and (call.arguments is None or isinstance(call.arguments, dict))
    try:
        extract_json(text)
    except ValueError:
        pass


def test_arguments_as_a_json_string_and_raw_newlines_are_accepted():
    text = '{"name": "finish", "arguments": "{\\"proposal\\": {\\"action\\": \\"no_action\\"}}"}'
    assert parse_text_calls(text, NAMES)[0].arguments == {"proposal": {"action": "no_action"}}
    raw = '```json\n{"name": "finish", "arguments": {"proposal": {"skill_md": "line one\nline two"}}}\n```'
    assert parse_text_calls(raw, NAMES)[0].arguments["proposal"]["skill_md"] == "line one\nline two"


def test_prose_and_other_json_are_not_calls():
    assert parse_text_calls("I think the answer is 42.", NAMES) == []
    assert parse_text_calls('{"answer": 42}', NAMES) == []
    unknown = parse_text_calls('{"name": "rm", "arguments": {"path": "/"}}', NAMES)
    assert [call.name for call in unknown] == ["rm"]  # shaped like a call: the role answers "unknown tool"


def test_the_tools_description_shows_each_schema_from_its_model():
    text = describe_tools(TOOLS)
    assert "## read_file" in text and "## finish" in text
    assert '"path": {"description"' in text and '"no_action"' in text and '"$ref"' not in text


def test_the_text_conversation_turns_calls_and_results_into_plain_turns():
    messages = [
        {"role": "system", "content": "Be useful."},
        {"role": "user", "content": "Go."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "x"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "text of x"},
        {"role": "user", "content": "Now finish."},
    ]
    shown = as_text_conversation(messages, TOOLS)
    assert [m["role"] for m in shown] == ["system", "user", "assistant", "user"]
    assert shown[0]["content"].startswith("Be useful.\n\n# Tools")
    assert json.loads(shown[2]["content"])["name"] == "read_file"
    assert shown[3]["content"] == "Result of read_file:\ntext of x\n\nNow finish."
    assert messages[0]["content"] == "Be useful."


class Library:
    def read(self, path):
        if path.startswith("traces/"):
            return f"trace {path}", True
        raise LookupError(f"no file {path!r}")

    def list(self, path):
        return []


def test_the_proposer_corrects_a_reply_without_a_call_and_takes_a_bare_proposal_as_finish():
    proposal = {"action": "no_action", "rationale": "nothing to fix"}
    replies = [
        "Let me think about the failures.",
        '{"name": "read_file", "arguments": {"path": "traces/t1"}}',
        f"My proposal:\n```json\n{json.dumps(proposal)}\n```",
    ]
    with FakeOpenAIServer(lambda body: replies.pop(0)) as server:
        model = LiteLLMModel(
            RoleSettings(model="openai/fake-model", api_base=server.base_url), LLMSettings(), "proposer", Meter()
        )
        result = Proposer(model, Library(), max_turns=5, min_trace_reads=1).run(CONTEXT)
    assert result.proposal == proposal and result.turns == 3 and result.reads == ["traces/t1"]
    turns = result.transcript.turns
    assert turns[0].error == "no tool call" and result.transcript.invalid_outputs == 1
    correction = server.requests[1]["messages"][-1]["content"]
    assert "Without native tool calls, write the call as one JSON object" in correction
    assert turns[1].calls[0].protocol == "text" and "tools" not in server.requests[2]
    assert server.requests[2]["messages"][-1]["content"].startswith("Result of read_file:\ntrace traces/t1")
    assert turns[2].calls[0].name == "finish" and result.transcript.outcome == proposal


def test_the_proposer_reports_a_context_overflow_as_its_error():
    class Overflowing:
        def complete(self, messages, tools=None, response_model=None, call_required=False):
            raise ContextOverflow("the proposer's system prompt (9000 tokens) does not fit its context window")

    result = Proposer(Overflowing(), Library(), max_turns=3, min_trace_reads=0).run(CONTEXT)
    assert result.proposal is None and "does not fit" in result.error and result.transcript.error == result.error


@PROPERTY
@given(sizes=st.lists(st.integers(0, 20_000), min_size=1, max_size=8), limit=st.integers(1500, 12_000))
def test_fitting_keeps_the_system_prompt_and_stays_under_the_limit(sizes, limit):
    messages = [{"role": "system", "content": "rules " * 50}, {"role": "user", "content": "# task\n" + "q" * 3000}]
    messages += [
        {"role": "tool" if n % 2 else "user", "tool_call_id": "c", "content": f"# part {n}\n" + "z" * size}
        for n, size in enumerate(sizes)
    ]
    try:
        fitted = fit_messages(messages, limit)
    except ContextOverflow:
        assert conversation_tokens(messages[:1]) > limit / 4
        return
    assert conversation_tokens(fitted.messages) <= limit
    assert fitted.messages[0] == messages[0] and len(fitted.messages) == len(messages)


class Follower:
    """A weak model: it finishes at once, and afterwards does exactly what the last answer says."""

    def __init__(self):
        self.turn = 0

    def complete(self, messages, tools=None, response_model=None, call_required=False):
        self.turn += 1
        told = re.search(r"Next, call read_file with (\{.*?\})", str(messages[-1].get("content")))
        if told:
            call = ToolCall(f"c{self.turn}", "read_file", json.loads(told.group(1)), told.group(1))
        else:
            call = ToolCall(f"c{self.turn}", "finish", {"proposal": {"action": "no_action"}}, "{}")
        return Reply(None, [call])


def test_the_proposer_names_the_next_trace_to_read_failures_first_until_enough_are_read():
    outcomes = [
        {"id": task, "success": success, "score": float(success), "prediction": "x", "expected": "y"}
        for task, success in (("t1", True), ("t2", False), ("t3", False))
    ]
    result = Proposer(Follower(), Library(), max_turns=10, min_trace_reads=2).run(replace(CONTEXT, outcomes=outcomes))
    assert result.reads == ["traces/t2", "traces/t3"] and result.proposal == {"action": "no_action"}
    assert result.turns == 4  # finish (refused), read, read (its result says what to read next), finish
    last_read = result.transcript.messages[-3]["content"]
    assert 'Next, call finish with your one proposal, e.g. {"name": "finish"' in last_read
    assert '"action": "create"' in last_read and "<why it fixes t2, t3>" in last_read


def test_a_created_skill_can_be_given_as_its_parts_which_weak_models_manage():
    parts = {
        "action": "create",
        "name": "Spell Letters",
        "description": "Spell a word\nbefore reversing it.",
        "when_to_apply": "A task asks to reverse a word.",
        "when_not_to_apply": "Other tasks.",
        "instructions": "1. Write one letter per line.\n2. Read them bottom-up.",
        "rationale": "train-01 failed",
    }
    proposal = prepare_proposal(parts, {}, 1)
    text = proposal.changes["skills/spell-letters/SKILL.md"]
    assert skill_problems(text, "spell-letters") == []
    assert "description: Spell a word before reversing it." in text and "## Instructions\n1. Write one" in text
    with pytest.raises(InvalidProposal, match="`instructions` must be a non-empty string"):
        prepare_proposal({**parts, "instructions": " "}, {}, 1)
    whole = prepare_proposal({**parts, "skill_md": text.replace("Read them", "Then read them")}, {}, 1)
    assert "Then read them bottom-up" in whole.changes["skills/spell-letters/SKILL.md"]  # the whole file wins
    named = prepare_proposal({**parts, "skill_md": "spell-letters.md"}, {}, 1)  # not a SKILL.md: the parts win
    assert named.changes["skills/spell-letters/SKILL.md"] == text
    assert any("`skill_md` has no front matter" in note for note in named.notes)


class Reader:
    """A weak model that reads the same trace forever, unless `finish` is all it is offered."""

    def __init__(self):
        self.offered: list[list[str]] = []

    def complete(self, messages, tools=None, response_model=None, call_required=False):
        names = [tool["function"]["name"] for tool in tools]
        self.offered.append(names)
        if names == ["finish"]:
            return Reply(None, [ToolCall("c", "finish", {"proposal": {"action": "no_action"}}, "{}")])
        return Reply(None, [ToolCall("c", "read_file", {"path": "traces/t2"}, '{"path": "traces/t2"}')])


@pytest.mark.parametrize(
    ("max_turns", "offered"),
    [
        (10, [["read_file", "list_files", "finish"]] * 2 + [["finish"]]),  # a repeated call, enough traces read
        (2, [["read_file", "list_files", "finish"], ["finish"]]),  # the last turn
    ],
)
def test_only_finish_is_offered_after_a_repeated_call_or_on_the_last_turn(max_turns, offered):
    model = Reader()
    result = Proposer(model, Library(), max_turns=max_turns, min_trace_reads=1).run(CONTEXT)
    assert model.offered == offered and result.proposal == {"action": "no_action"}


def test_a_page_read_again_is_answered_with_the_next_step():
    class PageReader:
        def complete(self, messages, tools=None, response_model=None, call_required=False):
            told = re.search(r"Next, call read_file with (\{.*?\})", str(messages[-1].get("content")))
            path = json.loads(told.group(1))["path"] if told else "wiki/index.md"
            return Reply(None, [ToolCall("c", "read_file", {"path": path}, json.dumps({"path": path}))])

    class Pages(Library):
        def read(self, path):
            return ("# Wiki index", False) if path == "wiki/index.md" else super().read(path)

    outcomes = [{"id": "t1", "success": False, "score": 0.0, "prediction": "x", "expected": "y"}]
    result = Proposer(PageReader(), Pages(), max_turns=4, min_trace_reads=1).run(replace(CONTEXT, outcomes=outcomes))
    assert result.reads[:3] == ["wiki/index.md", "wiki/index.md", "traces/t1"]
