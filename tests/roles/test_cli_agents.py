"""CLI runners (`agent.runner: command`, `qwen-code`): the stream-json parser on a real Qwen Code
transcript, the `command` preset end to end with a real process of our own as the CLI (its limits,
its environment, the sandbox), the fingerprint and the refusals."""

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import needs
from processes import alive
from scripted import SPELL, ScriptedWorld, skill_md
from taskfolders import bugfix_suite
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.benchmarks.registry import load_benchmark
from wikiskill.cli import app
from wikiskill.core.config import Config
from wikiskill.core.errors import ConfigError
from wikiskill.knowledge.skills import parse_skill
from wikiskill.loop.fingerprint import eval_setup
from wikiskill.roles.coding_agents.cli_agent import CliAgent
from wikiskill.roles.coding_agents.presets import make_preset
from wikiskill.roles.coding_agents.qwen_code import QwenCode
from wikiskill.roles.coding_agents.stream_json import NO_RESULT
from wikiskill.roles.settings import Role
from wikiskill.store.traces import Trajectory
from wikiskill.store.workspace import format_message
from wikiskill.testing.fakeserver import FakeOpenAIServer
from workspaces import UNUSED_SERVER

FIXTURE = Path(__file__).parents[1] / "fixtures" / "qwen_code" / "stream.jsonl"

FAKE_CLI = '''#!{python}
"""A CLI of our own: logs what it was given, reads the skills it finds, answers example-qa."""
import json, os, re, sys, subprocess, time
from pathlib import Path

skills, turns, prompt = Path(sys.argv[2]), int(sys.argv[4]), sys.argv[-1]
with open({log!r}, "a") as log:
    log.write(json.dumps({{"env": dict(os.environ), "cwd": os.getcwd(), "prompt": prompt, "argv": sys.argv}}) + "\\n")
if "spawn" in Path({mode!r}).read_text():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    Path({log!r} + ".child").write_text(str(child.pid))
    time.sleep(120)
if "turns" in Path({mode!r}).read_text() and turns < 5:
    print("thinking", flush=True)
    sys.exit(f"turn limit reached after {{turns}} turns")
skilled = False
for path in sorted(skills.glob("*/SKILL.md")):
    print(f"reading {{path}}")
    skilled = skilled or {marker!r} in path.read_text()
count = re.search(r"letter '(.)' occur in the word '(\\w+)'", prompt)
if count:
    answer = str(count.group(2).count(count.group(1)))
else:
    word = re.search(r"Write the word '(\\w+)' backwards", prompt).group(1)
    answer = word[::-1] if skilled and len(word) <= 6 else word
print(f"So the answer is\\n<answer>{{answer}}</answer>")
'''


@pytest.fixture()
def fake_cli(tmp_path):
    """Writes the fake CLI; returns (its argv template, its log, the file that sets its mode)."""
    log, mode = tmp_path / "cli.jsonl", tmp_path / "mode"
    mode.write_text("answer")
    script = tmp_path / "bin" / "fakecli"
    script.parent.mkdir()
    script.write_text(FAKE_CLI.format(python=sys.executable, log=str(log), mode=str(mode), marker=SPELL))
    script.chmod(0o755)
    return [str(script), "--skills", "{skills_dir}", "--turns", "{max_turns}", "{prompt}"], log, mode


def read_log(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def agent_for(agent_settings: dict, skills: list[str] = ()) -> tuple[CliAgent, list]:
    """A CliAgent on example-qa with `skills` (the SPELL skill for `spell-letters`), and val's tasks."""
    config = Config.model_validate(
        {"benchmark": "example-qa", "model": "openai/fake-model", "api_base": UNUSED_SERVER, "agent": agent_settings}
    )
    benchmark = load_benchmark(config)
    parsed = [parse_skill(skill_md(name, SPELL if name == "spell-letters" else "NOTHING")) for name in skills]
    agent = CliAgent(make_preset(config.agent), benchmark, parsed, config.agent, config.role(Role.AGENT))
    return agent, benchmark.tasks("val")


def play(agent: CliAgent, task) -> Trajectory:
    return asyncio.run(agent.run(task))


def command_workspace(tmp_path: Path, command: list[str], **agent: object):
    """An example-qa workspace whose agent is the `command` preset with `command`."""
    ws = api.init_workspace(tmp_path / "ws", benchmark="example-qa", model="openai/fake-model", api_base=UNUSED_SERVER)
    path = ws.root / "wikiskill.yaml"
    data = yaml.safe_load(path.read_text())
    data["agent"] = {**data.get("agent", {}), "runner": "command", "command": command, **agent}
    path.write_text(yaml.safe_dump(data))
    return ws


# --- the stream-json parser, on the real transcript -------------------------------------------


def test_the_qwen_code_transcript_reads_into_messages_usage_and_the_skill_it_loaded():
    transcript = QwenCode().parse(FIXTURE.read_text().splitlines(), ["demo", "other"])
    assert transcript.error is None
    assert transcript.answer == "The skill says the answer is 42. <answer>42</answer>"
    first, tool, last = transcript.messages
    assert first["role"] == "assistant" and first["content"] == "I will load the demo skill."
    assert first["tool_calls"] == [
        {"id": "call_1", "type": "function", "function": {"name": "skill", "arguments": '{"skill": "demo"}'}}
    ]
    assert tool == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "How to answer the demo question; load it before answering.",
    }
    assert last == {"role": "assistant", "content": transcript.answer}
    assert transcript.skills_loaded == ["demo"]
    usage = transcript.usage
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (2, 18372, 46)


def test_a_transcript_cut_short_or_failed_is_an_error_with_its_reason():
    lines = FIXTURE.read_text().splitlines()
    cut = QwenCode().parse(lines[:-1], ["demo"])
    assert cut.answer is None and cut.error == NO_RESULT
    assert cut.skills_loaded == ["demo"] and cut.usage.prompt_tokens == 9151 + 9221
    failed = json.loads(lines[-1]) | {
        "subtype": "error_during_execution",
        "is_error": True,
        "error": {"message": "[API Error: 400\n bad request]"},
    }
    broken = QwenCode().parse([*lines[:-1], "not json at all", json.dumps(failed)], ["demo"])
    assert broken.answer is None and broken.error == "[API Error: 400 bad request]"


def test_a_skill_read_by_its_path_counts_as_loaded_and_only_copied_skills_count():
    event = {
        "type": "assistant",
        "message": {
            "content": [
                {
                    "type": "tool_use",
                    "id": "a",
                    "name": "read_file",
                    "input": {"absolute_path": "/tmp/x/work/.qwen/skills/spell-letters/SKILL.md"},
                },
                {"type": "tool_use", "id": "b", "name": "skill", "input": {"skill": "bundled-one"}},
                {
                    "type": "tool_use",
                    "id": "c",
                    "name": "run_shell_command",
                    "input": {"command": "cat other/SKILL.md"},
                },
            ]
        },
    }
    transcript = QwenCode().parse([json.dumps(event)], ["spell-letters", "other"])
    assert transcript.skills_loaded == ["spell-letters", "other"]


# --- the command preset, a real process -------------------------------------------------------


def test_a_command_cli_answers_in_its_own_folder_and_home_with_a_minimal_environment(tmp_path, fake_cli, monkeypatch):
    command, log, _ = fake_cli
    monkeypatch.setenv("LEAKY_SECRET", "must-not-reach-the-cli")
    agent, tasks = agent_for({"runner": "command", "command": command}, skills=["spell-letters"])
    reversal = next(task for task in tasks if "backwards" in task.question and len(task.answer) <= 6)
    trajectory = play(agent, reversal)

    assert trajectory.error is None and trajectory.prediction == reversal.answer and trajectory.score == 1
    assert trajectory.skills == ["spell-letters"] and trajectory.skills_loaded == ["spell-letters"]
    assert "reading" in trajectory.messages[-1]["content"] and reversal.question in trajectory.messages[0]["content"]
    (entry,) = read_log(log)
    assert set(entry["env"]) <= {"PATH", "HOME", "TERM", "LANG", "TMPDIR", "PWD", "SHLVL", "_", "LC_CTYPE"}
    assert entry["env"]["HOME"] != os.environ["HOME"] and Path(entry["cwd"]).parent == Path(entry["env"]["HOME"]).parent
    assert entry["argv"][2] == str(Path(entry["cwd"]) / ".agents" / "skills") and entry["argv"][4] == "30"
    assert not Path(entry["cwd"]).parent.exists()  # the task's folder is gone


def test_a_cli_over_its_time_limit_fails_the_task_and_its_process_tree_is_killed(tmp_path, fake_cli):
    command, log, mode = fake_cli
    mode.write_text("spawn")
    agent, tasks = agent_for({"runner": "command", "command": command, "timeout_s": 2})
    start = time.monotonic()
    trajectory = play(agent, tasks[0])
    assert time.monotonic() - start < 20
    assert trajectory.prediction is None and trajectory.score == 0
    assert trajectory.error.startswith("timed out after 2 s (agent.timeout_s)")
    child = int(Path(str(log) + ".child").read_text())
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(child)


def test_a_cli_over_its_turn_limit_fails_the_task_with_the_reason_it_gave(tmp_path, fake_cli):
    command, log, mode = fake_cli
    mode.write_text("turns")
    agent, tasks = agent_for({"runner": "command", "command": command, "max_steps": 2})
    trajectory = play(agent, tasks[0])
    assert trajectory.prediction is None and trajectory.score == 0
    assert trajectory.error == "fakecli exited with status 1: turn limit reached after 2 turns"
    assert read_log(log)[0]["argv"][4] == "2"


def test_a_command_runner_is_evaluated_and_its_template_keys_the_fingerprint(tmp_path, fake_cli):
    command, log, _ = fake_cli
    ws = command_workspace(tmp_path, command)
    first = api.evaluate(ws, "val").evaluation
    assert first.mean == pytest.approx(0.5) and len(read_log(log)) == first.n
    assert api.evaluate(ws, "val").evaluation.fingerprint == first.fingerprint
    assert len(read_log(log)) == first.n  # the same setup: every task came from the result cache
    other = command_workspace(tmp_path / "other", [*command[:-1], "--verbose", "{prompt}"])
    pooled = api.evaluate(other, "val", options=RunOptions(executor="processes", workers=2, concurrency=2)).evaluation
    assert pooled.fingerprint != first.fingerprint and pooled.mean == pytest.approx(0.5)
    assert len(read_log(log)) == 2 * first.n  # run again, in worker processes


# --- bubblewrap -----------------------------------------------------------------------------

SANDBOX_PROBE = """#!/bin/sh
echo probe > {outside} 2>/dev/null && echo "wrote outside" || echo "could not write outside"
cat {secret} 2>/dev/null || echo "could not read the home"
echo own > "$HOME/own.txt" && echo "wrote home"
echo own > ./own.txt && echo "wrote workdir"
echo "<answer>done</answer>"
"""


@needs("bwrap", package="bubblewrap")
@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_under_bwrap_the_cli_writes_only_its_folders_and_cannot_read_the_real_home(tmp_path, sandbox):
    secret = Path(os.environ["HOME"]) / "secret.txt"
    secret.write_text("the user's secret")
    outside = tmp_path / "outside.txt"
    probe = tmp_path / "probe"
    probe.write_text(SANDBOX_PROBE.format(outside=outside, secret=secret))
    probe.chmod(0o755)
    agent, tasks = agent_for({"runner": "command", "command": [str(probe)], "sandbox": sandbox})
    trajectory = play(agent, tasks[0])
    output = trajectory.messages[-1]["content"]
    assert "wrote home" in output and "wrote workdir" in output and trajectory.prediction == "done"
    if sandbox == "bwrap":
        assert "could not write outside" in output and not outside.exists()
        assert "could not read the home" in output and "secret" not in output
    else:  # the contrast: without the sandbox the CLI has the user's rights
        assert outside.exists() and "the user's secret" in output


FIXER = """#!/bin/sh
printf 'def absolute(x):\\n    return x if x >= 0 else -x\\n' > calc.py
echo "<answer>fixed calc.py</answer>"
"""
IDLE = "#!/bin/sh\necho '<answer>nothing to do</answer>'\n"


@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs("bwrap", package="bubblewrap"))])
def test_a_cli_works_in_a_task_folders_workdir_and_the_suites_check_scores_what_it_left(tmp_path, sandbox):
    ws = api.init_workspace(
        tmp_path / "ws", benchmark=f"tasks:{bugfix_suite(tmp_path)}", model="openai/fake-model", api_base=UNUSED_SERVER
    )
    scores = {}
    for name, script in (("fixer", FIXER), ("idle", IDLE)):
        cli = tmp_path / name
        cli.write_text(script)
        cli.chmod(0o755)
        path = ws.root / "wikiskill.yaml"
        data = yaml.safe_load(path.read_text())
        data["agent"] = {**data["agent"], "runner": "command", "command": [str(cli)], "sandbox": sandbox}
        path.write_text(yaml.safe_dump(data))
        scores[name] = [t.score for t in api.evaluate(ws, "val").runs[0]]
    assert scores == {"fixer": [1.0, 1.0], "idle": [0.0, 0.0]}


# --- fingerprint and refusals ------------------------------------------------------------------


def test_the_fingerprint_differs_by_runner_arguments_and_cli_version(tmp_path):
    cli = tmp_path / "versioned"
    cli.write_text("#!/bin/sh\necho 'mycli 1.0'\n")
    cli.chmod(0o755)
    base = {"benchmark": "example-qa", "model": "openai/fake-model"}

    def setup_id(**agent) -> str:
        config = Config.model_validate({**base, "agent": agent})
        return eval_setup(config, load_benchmark(config), "val").id

    builtin = setup_id()
    first = setup_id(runner="command", command=[str(cli), "{prompt}"])
    assert first != builtin
    assert setup_id(runner="command", command=[str(cli), "{prompt}"]) == first
    assert setup_id(runner="command", command=[str(cli), "--fast", "{prompt}"]) != first
    assert setup_id(runner="command", command=[str(cli), "{prompt}"], timeout_s=5) == first
    assert setup_id(runner="command", command=[str(cli), "{prompt}"], sandbox="bwrap") != first
    cli.write_text("#!/bin/sh\necho 'mycli 2.0'\n")
    os.utime(cli, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    assert setup_id(runner="command", command=[str(cli), "{prompt}"]) != first


def test_a_cli_runner_is_refused_for_an_interactive_suite_in_one_line(tmp_path):
    with pytest.raises(ConfigError, match="task folders only; textworld-cooking is an interactive suite"):
        api.init_workspace(tmp_path / "ws", benchmark="textworld-cooking", agent="qwen-code")
    result = CliRunner().invoke(
        app, ["init", str(tmp_path / "cli"), "--benchmark", "textworld-cooking", "--agent", "command"]
    )
    assert result.exit_code != 0 and len(result.output.strip().splitlines()) == 1, result.output
    assert not (tmp_path / "ws").exists() and not (tmp_path / "cli").exists()


@pytest.mark.parametrize(
    "runner, agent, message",
    [
        ("command", {"command": ["no-such-cli-xyz", "{prompt}"]}, "runs `no-such-cli-xyz`, which is not on PATH"),
        ("command", {"command": ["sh", "{nonsense}"]}, "{nonsense} in '{nonsense}' is no placeholder"),
        ("command", {}, "runner: command needs `command`"),
        ("mypkg_missing.presets:Mine", {}, "cannot import 'mypkg_missing.presets:Mine'"),
    ],
)
def test_a_cli_runner_that_cannot_start_is_refused_in_one_line(tmp_path, runner, agent, message):
    ws = command_workspace(tmp_path, ["sh", "{prompt}"])
    path = ws.root / "wikiskill.yaml"
    data = yaml.safe_load(path.read_text())
    data["agent"] = {"runner": runner, **agent}
    path.write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(app, ["-C", str(ws.root), "eval"])
    lines = result.output.strip().splitlines()
    assert result.exit_code != 0 and len(lines) == 1 and message in lines[0], result.output


def test_skills_shows_how_often_a_cli_loaded_each_skill(tmp_path, fake_cli):
    command, _, _ = fake_cli
    with FakeOpenAIServer(ScriptedWorld()) as server:
        ws = api.init_workspace(
            tmp_path / "ws", benchmark="example-qa", model="openai/fake-model", api_base=server.base_url, concurrency=4
        )
        path = ws.root / "wikiskill.yaml"
        data = yaml.safe_load(path.read_text())
        data["agent"] = {**data["agent"], "runner": "command", "command": command}
        ws.commit({"wikiskill.yaml": yaml.safe_dump(data)}, format_message("use the fake CLI", {"Step": "human"}))
        api.evolve(ws, 2)
    result = CliRunner().invoke(app, ["-C", str(ws.root), "skills"])
    assert result.exit_code == 0, result.output
    assert "loaded" in result.output and "spell-letters" in result.output
    usage = api.skill_usage(ws)
    assert usage["spell-letters"].loads > 0


@needs("bwrap", package="bubblewrap")
def test_init_with_a_cli_runner_suggests_bwrap_when_it_is_installed(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "qwen").write_text("#!/bin/sh\necho 0.24.4\n")
    (folder / "qwen").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(folder), os.environ["PATH"]]))
    ws = api.init_workspace(tmp_path / "ws", benchmark="example-qa", model="openai/fake-model", agent="qwen-code")
    text = (ws.root / "wikiskill.yaml").read_text()
    assert "bubblewrap is installed: `sandbox: bwrap`" in text
    agent = api.open_workspace(ws.root) and yaml.safe_load(text)["agent"]
    assert agent["runner"] == "qwen-code" and agent["sandbox"] == "none" and agent["timeout_s"] == 600
