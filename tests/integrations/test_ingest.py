"""`wikiskill ingest`: real agent session transcripts (Claude Code JSONL, OpenAI chat messages)
become trajectories in raw/, in one commit, secrets scrubbed, and the next round learns from them."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import git
from inprocess import evolve_scripted, scripted_workspace
from transcripts import CLAUDE, LEAKED_KEY, OPENAI
from wikiskill import api
from wikiskill.cli import app
from wikiskill.core.errors import TranscriptError
from wikiskill.core.parts import SESSION_FORMAT
from wikiskill.core.redact import Scrubber
from wikiskill.history.roundstory import round_story
from wikiskill.history.status import round_rows
from wikiskill.integrations.sessions import read_session, session_parser
from wikiskill.roles.sandbox import Sandbox
from wikiskill.store.rounds import round_state
from wikiskill.store.traces import Outcome, Trajectory
from wikiskill.store.trailers import Step
from wikiskill.store.workspace import MAIN, format_message


def claude(outcome=Outcome.FAILURE) -> Trajectory:
    return read_session(CLAUDE, session_parser("claude-code"), outcome, Scrubber())


def test_a_claude_code_session_keeps_the_agents_turns_tool_calls_and_results():
    trajectory = claude()
    roles = [m["role"] for m in trajectory.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
    assert trajectory.question.startswith("The invoice total test fails on CI")
    first = trajectory.messages[1]  # thinking, text and a tool call streamed over three lines: one reply
    assert "(thinking) Floats round 10.005 down" in first["content"]
    assert "Let me run the failing test first." in first["content"]
    assert (
        json.loads(first["tool_calls"][0]["function"]["arguments"])["command"] == "pytest tests/test_invoice.py -x -q"
    )
    assert trajectory.messages[2]["tool_call_id"] == first["tool_calls"][0]["id"]
    assert trajectory.messages[2]["content"].startswith("(error) F")
    assert [c["function"]["name"] for m in trajectory.messages for c in m.get("tool_calls", [])] == [
        "Bash",
        "Bash",
        "Edit",
    ]
    text = trajectory.render()
    assert "subagent notes" not in text and "analyzing your codebase" not in text  # sidechain and meta lines
    assert "-> Edit(" in text and "outcome: failure" in text
    assert trajectory.prediction.startswith("I switched the total to Decimal")
    assert trajectory.split == "ingested" and trajectory.score == 0.0


@pytest.mark.parametrize("wrapped", [True, False])
def test_an_openai_messages_file_is_read_as_a_list_or_under_messages(tmp_path, wrapped):
    messages = json.loads(OPENAI.read_text())["messages"]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": messages} if wrapped else messages))
    trajectory = read_session(path, session_parser("openai-messages"), Outcome.SUCCESS, Scrubber())
    assert [m["role"] for m in trajectory.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert trajectory.messages[2]["tool_calls"][0]["function"] == {
        "name": "lookup_order",
        "arguments": '{"order_id": "4417"}',
    }
    assert trajectory.messages[4]["content"] == "It shows as delivered by DHL, so there is nothing more to do."
    assert trajectory.success and trajectory.question.startswith("Where is order 4417?")


def test_ingest_commits_every_session_in_one_commit_with_secrets_scrubbed(tmp_path, monkeypatch):
    monkeypatch.setenv("INVOICE_API_KEY", LEAKED_KEY)
    ws = scripted_workspace(tmp_path / "ws")
    before = ws.head(MAIN)
    result = api.ingest(ws, [CLAUDE], "claude-code", "failure")
    other = api.ingest(ws, [OPENAI], "openai-messages", "success")
    assert result.round == other.round == 1
    commits = ws.log(MAIN)
    assert [c.sha for c in commits[:2]] == [other.commit, result.commit] and commits[2].sha == before
    meta = commits[1].meta
    assert (meta.step, meta.round, meta.cost_usd) == (Step.INGEST, 1, 0.0)
    assert ws.changed_paths(before, result.commit) == [f"raw/r001/ingested/{result.added[0].task_id}.json"]
    everything = git(ws.root, "log", "-p", "--all")
    assert LEAKED_KEY not in everything and "INVOICE_API_KEY=[REDACTED]" in everything
    assert not ws.dirty_paths("raw")  # the working tree is synced: evolve is not refused


def test_a_malformed_file_is_one_line_naming_it_and_its_line_and_nothing_is_committed(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    broken = tmp_path / "broken.jsonl"
    lines = CLAUDE.read_text().splitlines()
    broken.write_text("\n".join(lines[:4] + ['{"type": "assistant", "message": {"role": "assist'] + lines[4:]))
    before = ws.head(MAIN)
    result = CliRunner().invoke(
        app, ["-C", str(ws.root), "ingest", str(CLAUDE), str(broken), "--format", "claude-code"]
    )
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1
    output = result.output.strip()
    assert output.startswith(f"error: {broken}:5: not a JSON line (")
    assert "Traceback" not in result.output and ws.head(MAIN) == before


@pytest.mark.parametrize(
    "content, expected",
    [
        ('{"role": "user"}', "expected a list of messages"),
        ('[{"role": "robot", "content": "hi"}]', "message 1: needs a role"),
        (
            '[{"role": "user", "content": "hi"},\n {"role": "assistant", "tool_calls": [{"id": "c"}]}]',
            "message 2: a tool call needs function.name",
        ),
        ('[{"role": "user", "content": "hi"},\n\n  oops]', ":3: not valid JSON"),
        ('[{"role": "assistant", "content": "hello"}]', "no user and assistant messages"),
    ],
)
def test_malformed_openai_messages_are_refused_with_where(tmp_path, content, expected):
    path = tmp_path / "chat.json"
    path.write_text(content)
    with pytest.raises(TranscriptError, match=expected) as raised:
        read_session(path, session_parser("openai-messages"), Outcome.UNKNOWN, Scrubber())
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)


def test_the_same_session_ingested_again_is_skipped_and_commits_nothing(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    first = api.ingest(ws, [CLAUDE, CLAUDE], "claude-code")
    again = api.ingest(ws, [CLAUDE], "claude-code")
    assert len(first.added) == 1 and first.skipped == [str(CLAUDE)]
    assert again.commit is None and again.skipped == [str(CLAUDE)] and ws.head(MAIN) == first.commit


def test_the_next_round_maintainer_and_proposer_learn_from_ingested_sessions(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    session = api.ingest(ws, [CLAUDE], "claude-code", "failure").added[0]
    evolve_scripted(ws, rounds=1)
    state = round_state(ws, 1)
    assert state.rollout is not None and state.closed
    assert session.task_id in state.maintain.meta.sampled.split(",")
    page = ws.read_file(MAIN, "wiki/patterns/reversal-slips.md")
    assert session.task_id in page  # the scripted maintainer cites the first trace it was shown
    assert "INVOICE" not in ws.read_file(MAIN, "raw/r001/train/outcomes.jsonl")  # train stays train
    assert "-> Edit(" in Sandbox(ws, MAIN).read(f"traces/{session.task_id}")[0]
    proposer = json.loads(
        ws.read_file("rejected/r001-spell-letters", "raw/r001/proposer.json")
        or ws.read_file(MAIN, "raw/r001/proposer.json")
    )
    assert f"| {session.task_id} | fail (0.00) |" in json.dumps(proposer)
    assert [row.round for row in round_rows(ws)] == [1] and round_story(ws, 1).train_score is not None

    later = api.ingest(ws, [OPENAI], "openai-messages", "success")
    assert later.round == 2
    evolve_scripted(ws, rounds=1)
    assert [row.round for row in round_rows(ws)] == [1, 2]
    assert later.added[0].task_id in round_state(ws, 2).maintain.meta.sampled


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["type", "message", "role", "content", "text", "name", "isMeta", "tool_use_id", "id", "input"]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(JSON_VALUES.map(json.dumps) | st.text(max_size=20), max_size=6))
def test_any_file_is_a_trajectory_or_one_transcript_error(tmp_path, lines):
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(lines))
    for session_format in map(session_parser, SESSION_FORMAT.names()):
        try:
            read_session(path, session_format, Outcome.UNKNOWN, Scrubber())
        except TranscriptError as error:
            assert str(path) in str(error) and "\n" not in str(error)


def test_a_long_first_message_is_cut_as_the_task_and_kept_whole_in_the_messages(tmp_path):
    pasted = "Here is the log:\n" + "ERROR disk full\n" * 400
    path = tmp_path / "long.json"
    path.write_text(
        json.dumps(
            [
                {"role": "user", "content": pasted},
                {"role": "assistant", "content": [{"type": "refusal", "refusal": "I cannot."}]},
            ]
        )
    )
    trajectory = read_session(path, session_parser("openai-messages"), Outcome.FAILURE, Scrubber())
    assert len(trajectory.question) <= 500 and trajectory.question.startswith("Here is the log:")
    assert trajectory.messages[0]["content"] == pasted
    assert trajectory.messages[1]["content"] == "(refusal) I cannot." and trajectory.prediction == "(refusal) I cannot."


def test_sessions_go_to_the_first_round_that_has_not_started(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    ws.commit(
        {"raw/r001/train/outcomes.jsonl": ""}, format_message("r001 rollout: train", {"Round": 1, "Step": "rollout"})
    )
    assert round_state(ws, 1).started  # interrupted after its rollout: resumed, it keeps the experience it began with
    assert api.ingest(ws, [CLAUDE], "claude-code").round == 2
