"""The proposer reads traces and wiki pages through its tools and submits one proposal with
`finish`: a finish before enough traces are read is refused, a reply without a call is
corrected, a proposal written as text or as a JSON string is taken, a repeated call leaves only
`finish` on offer, and running out of turns is an error. A proposal off the schema is shown its
error once to repair, and how it was read (first time, repaired, given up) is counted; a call
that fails ends the conversation, not the command."""

import json

from chatmodels import served_model
from wikiskill.contracts.roles import ProposerContext
from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.llm.settings import LLMSettings
from wikiskill.roles.proposer import INVALID_CALL, Proposer
from wikiskill.roles.settings import Role, RoleSettings
from wikiskill.store.traces import Trajectory
from wikiskill.store.trailers import Parsed
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

PROPOSAL = {"action": "no_action", "rationale": "the failures are noise"}
OUTCOMES = [
    Trajectory(task_id=task, split="train", kind="qa", question=f"Q {task}", prediction="a", score=score).outcome()
    for task, score in (("t1", 0.0), ("t2", 1.0))
]
CONTEXT = ProposerContext(round=1, incumbent=0.5, train_score=0.5, outcomes=OUTCOMES)


class Library:
    def read(self, path: str) -> tuple[str, bool]:
        if path.startswith("traces/"):
            return f"# Trace {path}\nscore: 0.000", True
        if path == "wiki/index.md":
            return "# Index\n", False
        raise LookupError(f"no file {path!r}")

    def list(self, path: str) -> list[str]:
        return ["traces/t1", "traces/t2"] if path == "traces" else []


def read(path: str) -> Reply:
    return Reply(tool_calls=[{"name": "read_file", "arguments": {"path": path}}])


def finish(proposal: object = PROPOSAL) -> Reply:
    return Reply(tool_calls=[{"name": "finish", "arguments": {"proposal": proposal}}])


def propose(replies: list[Reply | str], max_turns: int = 6, min_trace_reads: int = 1):
    answers = iter(replies)
    with FakeOpenAIServer(lambda body: next(answers)) as server:
        proposer = Proposer(served_model(server, "proposer"), Library(), max_turns, min_trace_reads)
        result = proposer.run(CONTEXT)
    return result, server.requests


def test_a_finish_before_enough_traces_are_read_is_refused_and_the_failures_are_suggested_first():
    result, requests = propose([finish(), read("traces/t1"), finish()])
    assert result.proposal == PROPOSAL and result.reads == ["traces/t1"] and result.turns == 3
    refusal = requests[1]["messages"][-1]["content"]
    assert refusal.startswith("Error: read at least 1 traces before finishing (you have read 0).")
    assert 'call read_file with {"path": "traces/t1"}' in refusal
    assert result.transcript.outcome == PROPOSAL


def test_a_reply_without_a_call_is_corrected_and_a_proposal_written_as_text_is_taken():
    result, requests = propose(["I will think about it.", read("traces/t2"), json.dumps(PROPOSAL)])
    assert "Your reply did not call a tool." in requests[1]["messages"][-1]["content"]
    assert result.transcript.turns[0].error == "no tool call"
    assert result.proposal == PROPOSAL


def test_a_proposal_sent_as_a_json_string_is_decoded_and_one_that_is_no_object_is_refused():
    result, requests = propose([read("traces/t1"), finish("not a proposal"), finish(json.dumps(PROPOSAL))])
    assert requests[2]["messages"][-1]["content"] == (
        f"{INVALID_CALL} `proposal` must be a JSON object. Correct it and call finish again."
    )
    assert result.proposal == PROPOSAL and result.parsed == Parsed.REPAIRED


def test_a_proposal_that_parses_the_first_time_is_counted_so():
    result, _ = propose([read("traces/t1"), finish()])
    assert result.proposal == PROPOSAL and result.parsed == Parsed.FIRST


def test_a_proposal_off_the_schema_is_shown_its_error_once_and_a_repaired_one_is_taken():
    result, requests = propose([read("traces/t1"), finish({"action": "create", "name": "x"}), finish()])
    repair = requests[2]["messages"][-1]["content"]
    assert repair.startswith(f"{INVALID_CALL} `skill_md` must be a non-empty string") and "call finish again" in repair
    assert result.proposal == PROPOSAL and result.parsed == Parsed.REPAIRED and result.error is None


def test_a_second_proposal_off_the_schema_ends_the_conversation_with_the_reason():
    bad = {"action": "rewrite", "rationale": "?"}
    result, requests = propose([read("traces/t1"), finish(bad), finish(bad), read("traces/t2")])
    assert len(requests) == 3 and result.proposal == bad and result.parsed == Parsed.GAVE_UP
    assert result.error.startswith("the proposal did not match the schema after one repair: unknown action 'rewrite'")


def test_a_call_that_times_out_twice_ends_the_conversation_without_a_proposal_not_the_command():
    with FakeOpenAIServer(lambda body: Reply(content="late", delay=1.0)) as server:
        model = LiteLLMModel(
            RoleSettings(model="openai/fake-model", api_base=server.base_url, context_window=128_000),
            LLMSettings(retries=0, timeout=0.3),
            Role.PROPOSER,
            Meter(),
        )
        result = Proposer(model, Library(), 6, 1).run(CONTEXT)
    assert result.proposal is None and result.parsed == Parsed.GAVE_UP
    assert result.error.startswith("the proposer's model call failed: ") and "timed out twice" in result.error


def test_after_a_repeated_call_only_finish_is_on_offer():
    _, requests = propose([read("traces/t1"), read("traces/t1"), finish()])
    offered = [[tool["function"]["name"] for tool in request["tools"]] for request in requests]
    assert offered == [["read_file", "list_files", "finish"]] * 2 + [["finish"]]
    assert requests[2]["messages"][-1]["content"].startswith("Time to finish. Next, call finish")


def test_running_out_of_turns_is_an_error_and_no_proposal():
    result, _ = propose([read("traces/t1"), read("wiki/index.md"), read("traces/t2")], max_turns=3)
    assert result.proposal is None and result.error == "the proposer did not call finish within 3 turns"
    assert result.reads == ["traces/t1", "wiki/index.md", "traces/t2"]
