"""Learning from real sessions through the library API: an unknown session format or outcome is
refused before anything is read, and the model that drafts a task's rubric is the one the
command names, else the workspace's judge, else its agent, never the offline model."""

import pytest
import yaml

from inprocess import WorldModel, scripted_workspace
from transcripts import CLAUDE, OPENAI, Drafter, draft
from wikiskill import api
from wikiskill.core.errors import ConfigError, WikiskillError
from wikiskill.testing.fakeserver import FakeOpenAIServer


def test_unknown_format_or_outcome_is_refused(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    with pytest.raises(WikiskillError, match="use claude-code, openai-messages, atif, harbor-job"):
        api.ingest(ws, [CLAUDE], "cursor")
    with pytest.raises(WikiskillError, match="use success, failure, unknown"):
        api.ingest(ws, [CLAUDE], "claude-code", "meh")


def test_inside_a_workspace_its_judge_else_its_agent_drafts_unless_the_command_names_a_model(tmp_path, monkeypatch):
    with FakeOpenAIServer(Drafter()) as server:
        ws = api.init_workspace(
            tmp_path / "ws", benchmark="example-qa", model="openai/workspace-model", api_base=server.base_url
        )
        inside = draft([str(OPENAI), "--out", str(tmp_path / "a"), "--format", "openai-messages"], ws.root, monkeypatch)
        named = draft(
            [str(OPENAI), "--out", str(tmp_path / "b"), "--format", "openai-messages", "--model", "openai/named-model"],
            ws.root,
            monkeypatch,
        )
        config = yaml.safe_load((ws.root / "wikiskill.yaml").read_text())
        config["judge"] = {"model": "openai/judge-model"}
        (ws.root / "wikiskill.yaml").write_text(yaml.safe_dump(config))
        judged = draft([str(OPENAI), "--out", str(tmp_path / "c"), "--format", "openai-messages"], ws.root, monkeypatch)
    assert inside.exit_code == 0, inside.output
    assert named.exit_code == 0, named.output
    assert judged.exit_code == 0, judged.output
    assert [body["model"] for body in server.requests] == ["workspace-model", "named-model", "judge-model"]


def test_outside_a_workspace_the_drafting_model_must_be_named(tmp_path, monkeypatch):
    result = draft(
        [str(OPENAI), "--out", str(tmp_path / "suite"), "--format", "openai-messages"], tmp_path, monkeypatch
    )
    assert result.exit_code == 1 and "--model" in result.output and not (tmp_path / "suite").exists()


def test_the_offline_model_cannot_draft_a_rubric(tmp_path, monkeypatch):
    ws = api.init_workspace(tmp_path / "ws")  # textworld-cooking, played by the offline model
    result = draft([str(OPENAI), "--out", str(tmp_path / "suite"), "--format", "openai-messages"], ws.root, monkeypatch)
    assert result.exit_code == 1 and "offline model" in result.output and not (tmp_path / "suite").exists()


def test_a_drafting_model_without_its_key_is_refused_in_one_line_naming_it_and_nothing_is_written(
    tmp_path, monkeypatch
):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    out = tmp_path / "suite"
    with pytest.raises(ConfigError) as info:
        api.tasks_from_sessions([OPENAI], out, "openai-messages", model="anthropic/claude-sonnet-4-5")
    message = str(info.value)
    assert "the drafting model anthropic/claude-sonnet-4-5 needs ANTHROPIC_API_KEY" in message
    assert "\n" not in message and not out.exists()


def test_a_model_the_host_hands_over_drafts_without_a_key_or_a_server(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)

    class Scripted:
        def __init__(self):
            self.roles: list[str] = []

        def __call__(self, role):
            self.roles.append(role)
            return WorldModel(Drafter())

    factory = Scripted()
    drafted = api.tasks_from_sessions(
        [OPENAI], tmp_path / "suite", "openai-messages", model="anthropic/claude-sonnet-4-5", model_factory=factory
    )
    assert factory.roles == ["agent"]
    [task] = drafted.written
    assert "order 4417" in (task.folder / "task.md").read_text()
    assert (
        "It respects: But the customer has no parcel. Open a carrier claim." in (task.folder / "rubric.md").read_text()
    )
