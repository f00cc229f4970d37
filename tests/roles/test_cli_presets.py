"""The Claude Code, Codex and Gemini CLI presets: their transcripts read from real captures
(tests/fixtures/<cli>/stream.jsonl) and from hostile input, their command lines and private
HOMEs, and each real CLI run through its preset against FakeOpenAIServer (skipped where the npm
package is not installed)."""

import dataclasses
import json
import os
import tomllib
from pathlib import Path

import pytest

from cli_runs import KEY, SKILL_BODY, make_run, run_cli, skill_forever, skill_then_answer
from conftest import needs_cli
from wikiskill.roles.coding_agents.claude_code import ClaudeCode
from wikiskill.roles.coding_agents.codex import Codex
from wikiskill.roles.coding_agents.gemini_cli import GeminiCli
from wikiskill.testing.fakeserver import FakeOpenAIServer

FIXTURES = Path(__file__).parents[1] / "fixtures"
CASES = {  # preset, fixture folder, the skill-loading call as the transcript shows it
    "claude-code": (ClaudeCode, "claude_code", ("Skill", {"skill": "demo"})),
    "codex": (Codex, "codex", ("shell", {"command": "/bin/bash -lc 'cat .agents/skills/demo/SKILL.md'"})),
    "gemini-cli": (GeminiCli, "gemini_cli", ("activate_skill", {"name": "demo"})),
}
PACKAGES = {name: needs_cli(preset) for name, (preset, _, _) in CASES.items()}


def fixture_lines(name: str) -> list[str]:
    return (FIXTURES / CASES[name][1] / "stream.jsonl").read_text().splitlines()


def parse(name: str, lines: list[str], skills=("demo",)):
    return CASES[name][0]().parse(lines, list(skills))


@pytest.mark.parametrize("name", CASES)
def test_a_captured_transcript_reads_as_the_skill_call_its_result_and_the_answer(name):
    transcript = parse(name, fixture_lines(name))
    assert transcript.error is None
    assert transcript.answer == "The skill says the answer is 42. <answer>42</answer>"
    assert transcript.skills_loaded == ["demo"]
    first, result, last = transcript.messages[0], transcript.messages[1], transcript.messages[-1]
    assert first["role"] == "assistant" and first["content"] == "I will load the demo skill."
    call = first["tool_calls"][0]
    tool_name, arguments = CASES[name][2]
    assert (call["function"]["name"], json.loads(call["function"]["arguments"])) == (tool_name, arguments)
    assert result["role"] == "tool" and result["tool_call_id"] == call["id"]
    assert last == {"role": "assistant", "content": transcript.answer}
    assert transcript.usage.calls == 2
    assert transcript.usage.prompt_tokens > 1000 and transcript.usage.completion_tokens > 10


def test_claude_codes_reported_cost_and_the_skill_text_it_injects_are_kept():
    transcript = parse("claude-code", fixture_lines("claude-code"))
    assert transcript.usage.cost_usd > 0
    assert any(m["role"] == "user" and SKILL_BODY in m["content"] for m in transcript.messages)


def test_codex_shows_the_skill_file_in_the_commands_output():
    transcript = parse("codex", fixture_lines("codex"))
    assert SKILL_BODY in transcript.messages[1]["content"]


@pytest.mark.parametrize("name", CASES)
def test_a_skill_that_was_not_copied_in_is_not_counted_as_loaded(name):
    assert parse(name, fixture_lines(name), skills=("other",)).skills_loaded == []


@pytest.mark.parametrize("name", CASES)
def test_noise_and_a_cut_off_last_line_leave_the_run_unfinished_but_read(name):
    lines = fixture_lines(name)
    hostile = ["npm warn something", "", "[not json", "42", *lines[:-1], lines[-1][: len(lines[-1]) // 2]]
    transcript = parse(name, hostile)
    assert transcript.answer is None
    assert "ended early" in transcript.error
    assert transcript.skills_loaded == ["demo"] and transcript.messages[0]["tool_calls"]


@pytest.mark.parametrize("name", CASES)
def test_an_empty_transcript_is_a_failed_run(name):
    transcript = parse(name, [])
    assert (transcript.answer, transcript.messages, transcript.skills_loaded) == (None, [], [])
    assert transcript.error


def test_claude_codes_error_result_is_the_runs_error():
    error = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "result": "API Error: 400 probe",
        "num_turns": 1,
        "total_cost_usd": 0,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }
    turns = {
        "type": "result",
        "subtype": "error_max_turns",
        "is_error": True,
        "result": None,
        "errors": ["Reached maximum number of turns (2)"],
        "num_turns": 3,
    }
    assert parse("claude-code", [json.dumps(error)]).error == "API Error: 400 probe"
    assert parse("claude-code", [json.dumps(turns)]).error == "Reached maximum number of turns (2)"


def test_claude_code_reading_a_skill_file_counts_as_loading_it():
    read = {
        "type": "assistant",
        "message": {
            "id": "m1",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Read",
                    "input": {"file_path": "/w/.claude/skills/demo/SKILL.md"},
                },
                {"type": "tool_use", "id": "t2", "name": "Skill", "input": {"skill": "elsewhere"}},
            ],
        },
    }
    assert parse("claude-code", [json.dumps(read)]).skills_loaded == ["demo"]


def test_codex_fails_on_a_failed_turn_but_not_on_a_retried_error():
    retried = [
        {"type": "error", "message": "Reconnecting... 1/5"},
        {"type": "item.completed", "item": {"id": "i1", "type": "agent_message", "text": "done"}},
        {"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": 2}},
    ]
    transcript = parse("codex", [json.dumps(event) for event in retried])
    assert (transcript.answer, transcript.error, transcript.usage.tokens) == ("done", None, 7)
    failed = [
        {"type": "turn.started"},
        {"type": "error", "message": "stream disconnected"},
        {"type": "turn.failed", "error": {"message": '{"error":{"message":"probe"}}'}},
    ]
    transcript = parse("codex", [json.dumps(event) for event in failed])
    assert transcript.answer is None and transcript.error == '{"error":{"message":"probe"}}'


def test_gemini_clis_error_result_and_failed_tool_are_read():
    events = [
        {
            "type": "tool_use",
            "tool_name": "read_file",
            "tool_id": "r1",
            "parameters": {"file_path": ".gemini/skills/demo/SKILL.md"},
        },
        {"type": "tool_result", "tool_id": "r1", "status": "error", "error": {"message": "no such file"}},
        {
            "type": "result",
            "status": "error",
            "error": {"type": "unknown", "message": "[API Error: 400]"},
            "stats": {"input_tokens": 3, "output_tokens": 0},
        },
    ]
    transcript = parse("gemini-cli", [json.dumps(event) for event in events])
    assert transcript.error == "[API Error: 400]" and transcript.answer is None
    assert transcript.messages[1]["content"] == "[tool error] no such file"
    assert transcript.skills_loaded == ["demo"] and transcript.usage.prompt_tokens == 3


@pytest.mark.parametrize("name", CASES)
def test_the_command_line_runs_the_cli_headless_on_the_bare_model(name, tmp_path):
    preset = CASES[name][0]()
    run = make_run(preset, "http://127.0.0.1:9/v1", tmp_path, max_turns=7)
    argv = preset.argv(run)
    assert argv[0] == preset.program and preset.version_argv() == [preset.program, "--version"]
    assert "fake-model" in argv and "openai/fake-model" not in argv
    assert argv[-1] == run.prompt or f"--prompt={run.prompt}" in argv
    assert KEY not in " ".join(argv)  # the key travels in the environment, never in a process listing
    assert {"claude-code": "--max-turns", "codex": "exec", "gemini-cli": "stream-json"}[name] in argv


@pytest.mark.parametrize("name", CASES)
def test_the_environment_carries_the_endpoint_and_nothing_of_the_users(name, tmp_path, monkeypatch):
    monkeypatch.setenv("WIKISKILL_USER_SECRET", "user-secret-value")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "user-anthropic-key")
    monkeypatch.setenv("OPENAI_API_KEY", "user-openai-key")
    preset = CASES[name][0]()
    run = make_run(preset, "http://127.0.0.1:9/v1", tmp_path)
    env = preset.environment(run)
    assert not {"user-secret-value", "user-anthropic-key", "user-openai-key"} & set(env.values())
    assert KEY in env.values()
    for value in env.values():
        assert not value.startswith("/") or Path(value).is_relative_to(run.home)
    expected = {
        "claude-code": ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
        "gemini-cli": ("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9"),
    }.get(name)
    if expected:
        assert env[expected[0]] == expected[1]


@pytest.mark.parametrize("name", CASES)
def test_prepare_home_writes_only_inside_the_private_home(name, tmp_path):
    preset = CASES[name][0]()
    run = make_run(preset, "http://127.0.0.1:9/v1", tmp_path, max_turns=7)
    before = {path for path in tmp_path.rglob("*") if not path.is_relative_to(run.home)}
    preset.prepare_home(run)
    after = {path for path in tmp_path.rglob("*") if not path.is_relative_to(run.home)}
    assert after == before and any(run.home.rglob("*"))


@pytest.mark.parametrize("name", CASES)
def test_without_an_api_base_the_cli_keeps_its_own_default_endpoint(name, tmp_path):
    preset = CASES[name][0]()
    run = dataclasses.replace(make_run(preset, "unused", tmp_path), api_base=None)
    preset.prepare_home(run)
    env = preset.environment(run)
    assert "ANTHROPIC_BASE_URL" not in env and "GOOGLE_GEMINI_BASE_URL" not in env
    if name == "codex":
        config = tomllib.loads((run.home / ".codex/config.toml").read_text())
        assert config["model_providers"]["wikiskill"]["base_url"] == "https://api.openai.com/v1"


def test_codex_config_names_the_endpoint_as_its_model_provider(tmp_path):
    preset = Codex()
    run = make_run(preset, "http://127.0.0.1:9/v1", tmp_path)
    preset.prepare_home(run)
    config = tomllib.loads((run.home / ".codex/config.toml").read_text())
    provider = config["model_providers"][config["model_provider"]]
    assert provider["base_url"] == "http://127.0.0.1:9/v1" and provider["wire_api"] == "responses"
    assert preset.environment(run)[provider["env_key"]] == KEY
    assert preset.environment(run)["CODEX_HOME"] == str(run.home / ".codex")


def test_gemini_cli_settings_hold_the_turn_limit_and_api_key_auth(tmp_path):
    preset = GeminiCli()
    run = make_run(preset, "http://127.0.0.1:9/v1", tmp_path, max_turns=7)
    preset.prepare_home(run)
    settings = json.loads((run.home / ".gemini/settings.json").read_text())
    assert settings["model"]["maxSessionTurns"] == 7
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert settings["privacy"]["usageStatisticsEnabled"] is False


def plant_user_skills() -> None:
    """A skill in every place a CLI reads the user's own skills (HOME is the test's, see conftest)."""
    home = Path(os.environ["HOME"])
    for folder in (".claude/skills", ".agents/skills", ".codex/skills", ".gemini/skills"):
        (home / folder / "planted").mkdir(parents=True, exist_ok=True)
        (home / folder / "planted/SKILL.md").write_text(
            "---\nname: planted\ndescription: PLANTED-USER-SKILL must never be seen.\n---\nNo.\n"
        )


@pytest.mark.parametrize("name", [pytest.param(name, marks=PACKAGES[name]) for name in CASES])
def test_the_real_cli_loads_the_skill_through_its_preset_and_answers(name, tmp_path):
    plant_user_skills()
    preset = CASES[name][0]()
    with FakeOpenAIServer(skill_then_answer) as server:
        run = make_run(preset, server.base_url, tmp_path / "run")
        run = dataclasses.replace(run, prompt=f"--help is not a flag here. {run.prompt}")
        proc = run_cli(preset, run)
        requests = server.requests
    transcript = preset.parse(proc.stdout.splitlines(), list(run.skills))
    assert proc.returncode == 0, proc.stderr
    assert transcript.error is None, transcript.error
    assert transcript.answer.endswith("<answer>42</answer>")  # the skill's body reached the model
    assert transcript.skills_loaded == ["demo"]
    assert "PLANTED-USER-SKILL" not in json.dumps(requests)
    assert "load it before answering" in json.dumps(requests[0])  # the copied skill was listed to the model


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        pytest.param("claude-code", "Reached maximum number of turns (2)", marks=PACKAGES["claude-code"]),
        pytest.param("gemini-cli", "Reached max session turns", marks=PACKAGES["gemini-cli"]),
    ],
)
def test_the_real_cli_stops_at_the_turn_limit_as_a_failed_run(name, reason, tmp_path):
    preset = CASES[name][0]()
    with FakeOpenAIServer(skill_forever) as server:
        run = make_run(preset, server.base_url, tmp_path, max_turns=2)
        proc = run_cli(preset, run)
        assert len(server.requests) == 2
    transcript = preset.parse(proc.stdout.splitlines(), list(run.skills))
    assert proc.returncode != 0
    assert transcript.answer is None and reason in transcript.error
