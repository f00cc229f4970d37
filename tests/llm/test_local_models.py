"""Working with the models people run locally, through the CLI against the local fake server:
a server without native tool calls that fences its JSON still gets a well-formed proposal to
validation; `doctor` tells the protocols apart; `show` explains a round from git; role
transcripts are committed and unreadable to roles; a missing key is one line before anything."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import git
from scripted import ScriptedWorld, evolve_through_cli
from wikiskill import api
from wikiskill.cli import app
from wikiskill.core.errors import ConfigError
from wikiskill.llm.credentials import KEY_ENV, missing_key
from wikiskill.roles.sandbox import Sandbox
from wikiskill.roles.settings import RoleSettings
from wikiskill.store.workspace import MAIN
from wikiskill.testing.fakeserver import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]


def role_requests(requests: list[dict], start: str) -> list[dict]:
    return [body for body in requests if body["messages"][0]["content"].startswith(start)]


@pytest.fixture(scope="module")
def text_round(tmp_path_factory):
    runner = CliRunner()
    with FakeOpenAIServer(ScriptedWorld(), text_tools=True) as server:
        ws = tmp_path_factory.mktemp("text") / "ws"
        evolve_through_cli(runner, ws, server.base_url, rounds=1)
        yield ws, server.requests, runner


def test_a_model_without_native_tool_calls_gets_its_proposal_to_validation(text_round):
    ws, requests, _ = text_round
    proposer = role_requests(requests, "You are a Skill Proposer Agent")
    assert "tools" in proposer[0] and all("tools" not in body for body in proposer[1:])
    assert all("# Tools" in body["messages"][0]["content"] for body in proposer[1:])
    assert all(body["response_format"]["json_schema"]["name"] == "tool_call" for body in proposer[1:])
    gate = git(ws, "log", "-1", "--format=%(trailers:key=Wikiskill-Decision,valueonly)", "main").strip()
    assert gate == "accepted"
    assert (ws / "skills/spell-letters/SKILL.md").is_file()
    assert (ws / "wiki/patterns/reversal-slips.md").is_file()  # the fenced maintainer JSON was used


def test_the_maintainer_is_sent_its_schema_as_response_format(text_round):
    _, requests, _ = text_round
    maintainer = role_requests(requests, "You are a Wiki Maintainer Agent")
    assert len(maintainer) == 1
    schema = maintainer[0]["response_format"]["json_schema"]["schema"]
    assert {"create_patterns", "update_patterns", "append_log"} <= set(schema["properties"])


def test_role_transcripts_are_committed_scrubbed_and_unreadable_to_roles(text_round):
    ws, _, _ = text_round
    workspace = api.open_workspace(ws)
    proposer = json.loads(workspace.read_file(MAIN, "raw/r001/proposer.json"))
    calls = [call for turn in proposer["turns"] for call in turn["calls"]]
    assert [call["name"] for call in calls] == ["read_file"] * 4 + ["finish"]
    assert {call["protocol"] for call in calls} == {"text"}
    assert proposer["outcome"]["name"] == "spell-letters" and proposer["error"] is None
    assert proposer["messages"][0]["role"] == "system" and all(t["prompt_tokens"] > 0 for t in proposer["turns"])
    maintainer = json.loads(workspace.read_file(MAIN, "raw/r001/maintainer.json"))
    assert maintainer["turns"][0]["content"].startswith("Here is the JSON object:")
    assert maintainer["outcome"]["create_patterns"][0]["name"] == "reversal-slips"
    sandbox = Sandbox(workspace, MAIN)
    for path in ("raw/r001/proposer.json", "raw/r001/maintainer.json", "raw/r001/val.jsonl", "traces/proposer"):
        with pytest.raises(LookupError):
            sandbox.read(path)


def test_show_explains_the_round(text_round):
    ws, _, runner = text_round
    result = runner.invoke(app, ["-C", str(ws), "show", "1"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    out = result.output
    assert "train score 0.500" in out
    assert "traces/train-00, traces/train-01, traces/train-02, traces/train-03" in out
    assert "proposal: create spell-letters" in out and "rationale: reversal tasks fail" in out
    assert "wiki/patterns/reversal-slips.md" in out
    assert "validation: 6 tasks" in out and "effarig" in out
    assert "decision: accepted (0.833 vs incumbent 0.500)" in out
    missing = runner.invoke(app, ["-C", str(ws), "show", "7"])
    assert missing.exit_code == 1 and "round 7 has not run" in missing.output


def test_show_says_why_a_proposal_was_invalid(tmp_path):
    broken = {1: {"action": "create", "name": "no-body", "rationale": "forgot the skill"}}
    with FakeOpenAIServer(ScriptedWorld(proposals=broken), text_tools=True) as server:
        ws = api.init_workspace(
            tmp_path / "ws", benchmark="example-qa", model="openai/fake-model", api_base=server.base_url
        )
        api.evolve(ws, 1)
    story = api.show_round(ws, 1)
    assert story.decision == "invalid" and "`skill_md` must be a non-empty string" in story.reason
    assert story.validation == [] and len(story.reads) == 4


@pytest.mark.parametrize(("text_tools", "protocol"), [(False, "native"), (True, "text")])
def test_doctor_reports_the_tool_protocol_each_server_speaks(text_round, text_tools, protocol):
    ws, _, runner = text_round
    with FakeOpenAIServer(ScriptedWorld(), text_tools=text_tools) as server:
        checks = api.doctor(api.open_workspace(ws), api_base=server.base_url)
        result = runner.invoke(app, ["-C", str(ws), "doctor", "--api-base", server.base_url], env={"COLUMNS": "200"})
    assert [check.role for check in checks] == ["agent", "maintainer", "proposer"]
    assert {check.protocol for check in checks} == {protocol}
    assert all(check.reachable and check.json_ok and check.context_window == 8192 for check in checks)
    assert all(check.price_known is False and not check.failed for check in checks)
    assert len(server.requests) == 4  # two doctors; the three roles share one model, probed once each time
    assert result.exit_code == 0 and f"{protocol} (auto)" in result.output


def test_doctor_at_80_columns_piped_shows_whole_names_and_one_line_per_unreachable_role(tmp_path):
    model, url = "openai/qwen2.5-coder-32b-instruct", "http://127.0.0.1:9/v1"
    api.init_workspace(tmp_path / "ws", benchmark="example-qa", model=model, api_base=url)
    result = CliRunner().invoke(app, ["-C", str(tmp_path / "ws"), "doctor"], env={"COLUMNS": "80"})
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert "…" not in result.output
    for role in ("agent", "maintainer", "proposer"):
        assert any(line.split()[:2] == [role, model] for line in lines), result.output
        [problem] = [line for line in lines if line.startswith(f"{role} model ")]
        assert problem.startswith(f"{role} model {model} at {url}: ") and "Connection error" in problem
        assert "litellm.InternalServerError" not in problem


def test_a_missing_key_is_one_line_before_any_network_call_or_write(tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    api.init_workspace(ws, benchmark="example-qa", model="openai/gpt-4o-mini")
    before = sorted(str(p.relative_to(ws)) for p in ws.rglob("*") if ".git/" not in str(p))
    head = git(ws, "rev-parse", "HEAD")
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    script = (
        "import sys\nfrom wikiskill.cli import app\n"
        "try:\n    app(sys.argv[1:])\nexcept SystemExit as exit:\n"
        "    print('litellm imported' if 'litellm' in sys.modules else 'no litellm', exit.code)\n"
    )
    for command in (["evolve", "--rounds", "1"], ["eval"]):
        done = subprocess.run(
            [sys.executable, "-c", script, "-C", str(ws), *command],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.stdout.strip() == "no litellm 1"
        assert done.stderr.count("\n") == 1 and "OPENAI_API_KEY" in done.stderr and "Traceback" not in done.stderr
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="the agent's model openai/gpt-4o-mini needs OPENAI_API_KEY"):
        api.evaluate(api.open_workspace(ws), "val")
    assert sorted(str(p.relative_to(ws)) for p in ws.rglob("*") if ".git/" not in str(p)) == before
    assert git(ws, "rev-parse", "HEAD") == head and git(ws, "status", "--porcelain") == ""


def test_the_known_providers_key_variables_agree_with_litellm(monkeypatch):
    import litellm

    for provider, names in KEY_ENV.items():
        for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", *names):
            monkeypatch.delenv(name, raising=False)
        settings = RoleSettings(model=f"{provider}/some-model")
        expected = litellm.validate_environment(model=f"{provider}/some-model")["missing_keys"]
        if names:
            assert set(names) <= set(expected) and missing_key(settings) == " or ".join(names)
            monkeypatch.setenv(names[-1], "sk-test-value")
            assert missing_key(settings) is None
        else:
            assert missing_key(settings) is None
    assert missing_key(RoleSettings(model="openai/gpt-4o-mini", api_base="http://127.0.0.1:1/v1")) is None
