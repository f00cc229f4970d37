"""A round with a model too weak for the learning roles still completes (exit 0): a maintainer
and a proposer whose replies never parse leave the wiki unchanged and the proposal invalid, each
with its reason, how its reply was read (`Wikiskill-Parsed`) and the advice that the model looks
too weak for the role; a reply repaired after its parse error is recorded as repaired, and so is
a proposal the harness would refuse before validation (a copied placeholder), which the proposer
is told of once."""

import json

from typer.testing import CliRunner

from scripted import DEFAULT_PROPOSALS, ScriptedWorld, evolve_through_cli
from wikiskill import api
from wikiskill.knowledge.junk import WEAK_PROPOSER
from wikiskill.loop.steps.experience import WEAK_MAINTAINER
from wikiskill.roles.proposer import INVALID_CALL
from wikiskill.store.trailers import Decision, Parsed, Step
from wikiskill.store.workspace import MAIN
from wikiskill.testing.fakeserver import Reply


class WeakWorld(ScriptedWorld):
    """The maintainer replies with `maintainer_replies` in turn; after its reads the proposer
    submits `proposals` in turn."""

    def __init__(self, maintainer_replies: list[str], proposals: list[object]):
        super().__init__()
        self.maintainer_replies, self.proposals_given = iter(maintainer_replies), iter(proposals)

    def __call__(self, body: dict) -> Reply | str:
        if body["messages"][0]["content"].startswith("You are a Wiki Maintainer Agent"):
            return next(self.maintainer_replies)
        return super().__call__(body)

    def propose(self, messages: list[dict]) -> Reply:
        if sum(1 for m in messages if m["role"] == "assistant") < 4:
            return super().propose(messages)
        return Reply(tool_calls=[{"name": "finish", "arguments": {"proposal": next(self.proposals_given)}}])


def run_round(tmp_path, world: WeakWorld):
    from wikiskill.testing.fakeserver import FakeOpenAIServer

    ws = tmp_path / "ws"
    with FakeOpenAIServer(world) as server:
        evolve_through_cli(CliRunner(), ws, server.base_url, rounds=1)  # asserts exit 0
    workspace = api.open_workspace(ws)
    log = workspace.log(MAIN)
    maintain = next(commit for commit in log if commit.meta.step == Step.MAINTAIN)
    gate = next(commit for commit in log if commit.meta.step == Step.GATE)
    return workspace, maintain, gate, server.requests


def test_replies_that_never_parse_finish_the_round_with_each_reason_recorded(tmp_path):
    bad_proposal = {"action": "rewrite-everything", "rationale": "?"}
    world = WeakWorld(["I think the agent slipped.", "{ still not json"], [bad_proposal, bad_proposal])
    workspace, maintain, gate, requests = run_round(tmp_path, world)
    assert maintain.subject == "r001 maintain failed: wiki unchanged" and maintain.meta.parsed == Parsed.GAVE_UP
    body = workspace.body(maintain.sha)
    assert "could not be used after 2 attempt(s): invalid JSON" in body and WEAK_MAINTAINER in body
    assert gate.meta.decision == Decision.INVALID and gate.meta.parsed == Parsed.GAVE_UP
    reason = workspace.body(gate.sha)
    assert "invalid proposal: unknown action 'rewrite-everything'" in reason and WEAK_PROPOSER in reason
    maintainer = [r for r in requests if r["messages"][0]["content"].startswith("You are a Wiki Maintainer")]
    assert maintainer[0]["response_format"]["type"] == "json_schema"


def test_replies_repaired_after_their_parse_error_are_recorded_as_repaired(tmp_path):
    page = json.dumps({"create_patterns": [], "append_log": "Nothing new this round."})
    no_action = {"action": "no_action", "rationale": "the failures are noise"}
    world = WeakWorld(["no JSON at all", page], [{"action": "create", "name": "x"}, no_action])
    _, maintain, gate, _ = run_round(tmp_path, world)
    assert maintain.meta.parsed == Parsed.REPAIRED and maintain.meta.status is None
    assert gate.meta.decision == Decision.NO_ACTION and gate.meta.parsed == Parsed.REPAIRED


def test_a_proposal_that_copies_the_schemas_placeholder_is_told_so_once_and_its_correction_is_validated(tmp_path):
    page = json.dumps({"create_patterns": [], "append_log": "Nothing new this round."})
    copied = {**DEFAULT_PROPOSALS[1], "name": "skill-name"}
    world = WeakWorld([page], [copied, DEFAULT_PROPOSALS[1]])
    workspace, _, gate, requests = run_round(tmp_path, world)
    told = [
        message["content"]
        for request in requests
        for message in request["messages"][-1:]
        if message["role"] == "tool" and str(message["content"]).startswith(INVALID_CALL)
    ]
    assert len(told) == 1 and "`skill-name` is a placeholder of the proposal schema" in told[0]
    assert gate.meta.decision == Decision.ACCEPTED and gate.meta.skill == "spell-letters"
    propose = next(commit for commit in workspace.log(gate.parents[1]) if commit.meta.step == Step.PROPOSE)
    assert propose.meta.parsed == Parsed.REPAIRED


def test_a_placeholder_copied_again_after_being_told_is_recorded_invalid_with_the_advice(tmp_path):
    page = json.dumps({"create_patterns": [], "append_log": "Nothing new this round."})
    copied = {**DEFAULT_PROPOSALS[1], "name": "skill-name"}
    world = WeakWorld([page], [copied, copied])
    workspace, _, gate, _ = run_round(tmp_path, world)
    assert gate.meta.decision == Decision.INVALID and gate.meta.parsed == Parsed.REPAIRED
    reason = workspace.body(gate.sha)
    assert "`skill-name` is a placeholder of the proposal schema" in reason and WEAK_PROPOSER in reason
