"""The workdir agent: a scripted model drives its one `bash` tool in a real working directory
(native tool calls and the text protocol), commands are killed with their children when they run
out of time, long output is cut to its head and tail, and under bubblewrap a command cannot write
outside the working directory, read the user's home or reach the network."""

import asyncio
import os
import pwd
import re
import shutil
import socket
import sys
import time
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from conftest import needs
from taskfolders import BUGGY, FIXED, bugfix_suite
from wikiskill import api
from wikiskill.benchmarks import BenchmarkKind, Task
from wikiskill.core.config import Config
from wikiskill.core.errors import ConfigError
from wikiskill.environments.bubblewrap import bwrap_path
from wikiskill.environments.host import run_shell
from wikiskill.knowledge.settings import SkillsSettings
from wikiskill.knowledge.skills import Skill
from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.llm.settings import LLMSettings
from wikiskill.roles.bash_block import FINISH_MARKER
from wikiskill.roles.settings import RoleSettings, ToolProtocol
from wikiskill.roles.shell_agent import MAX_FORMAT_ERRORS, ShellAgent
from wikiskill.store.settings import parse_config
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

needs_bwrap = needs("bwrap", package="bubblewrap")
TASK = Task(id="fix-greeting", split="train", question="greet.py greets with the wrong word; fix it.")


class Script:
    """Replies with each scripted tool call in turn, then finishes with the last tool result."""

    def __init__(self, *commands: str):
        self.commands = list(commands)

    def __call__(self, body: dict) -> Reply:
        step = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if step < len(self.commands):
            return Reply(tool_calls=[{"name": "bash", "arguments": {"command": self.commands[step]}}])
        last = body["messages"][-1]["content"]
        return Reply(tool_calls=[{"name": "finish", "arguments": {"answer": f"done; last output: {last[-80:]}"}}])


def agent(server: FakeOpenAIServer, max_steps: int = 10, skills: list[Skill] | None = None, **options) -> ShellAgent:
    model = LiteLLMModel(
        RoleSettings(model="openai/fake-model", api_base=server.base_url),
        LLMSettings(retries=0, timeout=20),
        "agent",
        Meter(),
    )
    return ShellAgent(model, skills or [], SkillsSettings(), max_steps, **options)


def play(shell: ShellAgent, workdir: Path, task: Task = TASK):
    return asyncio.run(shell.play(task, workdir))


@pytest.mark.parametrize("text_tools", [False, True])
def test_a_scripted_model_reads_and_edits_a_file_with_bash_and_finishes(tmp_path, text_tools):
    (tmp_path / "greet.py").write_text("def greet(name):\n    return 'Goodbye, ' + name\n")
    script = Script(
        "cat greet.py", "sed -i s/Goodbye/Hello/ greet.py", "python3 -c 'import greet; print(greet.greet(\"Ann\"))'"
    )
    with FakeOpenAIServer(script, text_tools=text_tools) as server:
        trajectory = play(agent(server), tmp_path)
    assert (tmp_path / "greet.py").read_text() == "def greet(name):\n    return 'Hello, ' + name\n"
    assert trajectory.kind == BenchmarkKind.WORKDIR and trajectory.error is None and trajectory.score == 0.0
    assert trajectory.prediction.startswith("done; last output:") and "Hello, Ann" in trajectory.prediction
    results = [m["content"] for m in server.requests[1]["messages"] if m["role"] in ("tool", "user")]
    assert any("exit code 0" in text and "return 'Goodbye, ' + name" in text for text in results)


def test_the_skills_reach_the_system_prompt_and_a_missing_finish_is_the_error(tmp_path):
    skill = Skill(
        name="run-tests-first", description="Run the tests before editing.", body="SKILL-BODY-MARKER", text=""
    )
    with FakeOpenAIServer(Script("true", "true", "true", "true")) as server:
        trajectory = play(agent(server, max_steps=3, skills=[skill]), tmp_path)
    assert "SKILL-BODY-MARKER" in server.requests[0]["messages"][0]["content"]
    assert trajectory.skills == ["run-tests-first"] and trajectory.prediction is None
    assert trajectory.error == "no finish after 3 steps" and len(server.requests) == 3


def test_a_reply_without_a_tool_call_is_told_once_how_to_act_and_a_second_ends_the_task_with_its_text(tmp_path):
    with FakeOpenAIServer(lambda body: "The answer is 42.") as server:
        trajectory = play(agent(server), tmp_path)
    assert trajectory.prediction == "The answer is 42." and trajectory.error is None
    assert len(server.requests) == 2
    told = server.requests[1]["messages"][-1]
    assert told["role"] == "user" and "called no tool" in told["content"] and '"name": "bash"' in told["content"]


def test_a_reply_without_a_tool_call_after_the_workdir_changed_ends_the_task_at_once(tmp_path):
    def script(body: dict) -> Reply | str:
        if len(body["messages"]) == 2:
            return Reply(tool_calls=[{"name": "bash", "arguments": {"command": "echo done > result.txt"}}])
        return "I wrote result.txt."

    with FakeOpenAIServer(script) as server:
        trajectory = play(agent(server), tmp_path)
    assert trajectory.prediction == "I wrote result.txt." and len(server.requests) == 2
    assert (tmp_path / "result.txt").read_text() == "done\n"


def test_the_first_prompt_lists_the_workdir_with_sizes_and_the_small_text_files(tmp_path):
    (tmp_path / "solution.py").write_text('def add(a, b):\n    """Return a + b."""\n')
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "blob.bin").write_bytes(b"\0\1" * 50)
    (tmp_path / "data" / "big.txt").write_text("x" * 9000)
    with FakeOpenAIServer(Script()) as server:
        play(agent(server), tmp_path)
    first = server.requests[0]["messages"][1]["content"]
    assert first.startswith(TASK.question)
    assert "solution.py (39 bytes)" in first and '    """Return a + b."""' in first
    assert "data/blob.bin (100 bytes)" in first and "data/big.txt (9000 bytes)" in first
    assert "xxxx" not in first and "\\x00" not in first


def test_a_command_past_its_time_limit_is_killed_with_its_children(tmp_path):
    pidfile = tmp_path / "child.pid"
    started = time.monotonic()
    result = asyncio.run(
        run_shell(f"sleep 30 & echo $! > {pidfile}; wait", tmp_path, timeout_s=1, output_chars=1000, sandbox=False)
    )
    assert result.timed_out and result.exit_code is None and time.monotonic() - started < 10
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)
    assert result.render(1).startswith("killed after 1 s")


def test_what_a_command_leaves_running_in_the_background_ends_with_it(tmp_path):
    pidfile = tmp_path / "child.pid"
    result = asyncio.run(
        run_shell(
            f"sleep 30 > /dev/null 2>&1 & echo $! > {pidfile}", tmp_path, timeout_s=20, output_chars=1000, sandbox=False
        )
    )
    assert result.exit_code == 0 and not result.timed_out
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


def test_long_output_keeps_its_head_and_tail_and_says_how_much_was_cut(tmp_path):
    result = asyncio.run(
        run_shell("echo FIRST; seq 1 100000; echo LAST", tmp_path, timeout_s=20, output_chars=1000, sandbox=False)
    )
    assert result.exit_code == 0 and len(result.output) < 1200
    assert result.output.startswith("FIRST\n1\n2\n") and result.output.rstrip().endswith("100000\nLAST")
    cut = len("FIRST\n") + sum(len(f"{n}\n") for n in range(1, 100001)) + len("LAST\n") - 1000
    assert f"[... {cut} bytes of output cut" in result.output


def test_a_command_sees_no_api_key_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-commands")
    result = asyncio.run(run_shell("env", tmp_path, timeout_s=20, output_chars=10_000, sandbox=False))
    assert "sk-not-for-commands" not in result.output and "PATH=" in result.output


@needs_bwrap
def test_under_bubblewrap_a_command_cannot_write_outside_the_workdir_nor_read_home(tmp_path, monkeypatch):
    home, workdir, outside = tmp_path / "home", tmp_path / "work", tmp_path / "outside"
    for folder in (home, workdir, outside):
        folder.mkdir()
    (home / "planted-secret").write_text("HOME-SECRET")
    monkeypatch.setenv("HOME", str(home))
    listener = socket.create_server(("127.0.0.1", 0))  # reachable from this host's network only
    port = listener.getsockname()[1]
    commands = [
        f"cat {home}/planted-secret 2>/dev/null; echo files: $(ls -A {home})",
        f"echo escaped > {outside}/written; echo kept > inside",
        f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=2)'",
    ]
    with listener:
        results = [asyncio.run(run_shell(command, workdir, timeout_s=20, output_chars=10_000)) for command in commands]
    assert bwrap_path() is not None
    assert "HOME-SECRET" not in results[0].output and results[0].output == "files:\n"
    assert not (outside / "written").exists() and (workdir / "inside").read_text() == "kept\n"
    assert results[2].exit_code != 0 and "Connection refused" in results[2].output


@needs_bwrap
def test_under_bubblewrap_the_programs_in_the_home_still_run_read_only(tmp_path, monkeypatch):
    home, workdir = tmp_path / "home", tmp_path / "work"
    (home / "bin").mkdir(parents=True)
    workdir.mkdir()
    (home / "planted-secret").write_text("HOME-SECRET")
    tool = home / "bin" / "hello-tool"
    tool.write_text("#!/bin/sh\necho hello from the home\n")
    tool.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{home / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = asyncio.run(
        run_shell(f"hello-tool; cat ~/planted-secret; touch {home}/bin/new", workdir, timeout_s=20, output_chars=10_000)
    )
    assert result.output.startswith("hello from the home\n") and "HOME-SECRET" not in result.output
    assert "Read-only file system" in result.output and not (home / "bin" / "new").exists()


@needs_bwrap
def test_the_agent_fixes_an_example_suite_bug_under_bubblewrap_and_the_suites_check_passes(tmp_path, monkeypatch):
    from python_bugfix import SOLUTIONS, SUITE, TASK_OF, suite_check

    task_dir = SUITE / "train" / "paginate-off-by-one"
    workdir = tmp_path / "work"
    shutil.copytree(task_dir / "files", workdir)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # an active venv
    monkeypatch.setenv("HOME", pwd.getpwuid(os.getuid()).pw_dir)  # the real one, which may hold this Python
    check = "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -q"
    fixed = (SOLUTIONS / "paginate-off-by-one" / "pages.py").read_text()  # written, not copied: the home is hidden
    script = Script(check, f"cat > pages.py <<'FIXED'\n{fixed}FIXED", check)
    task = TASK_OF["paginate-off-by-one"]
    assert suite_check(task, workdir) == 0.0
    with FakeOpenAIServer(script) as server:
        trajectory = play(agent(server), workdir, task)
    results = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert results[0].startswith("exit code 1\n") and "2 failed, 1 passed" in results[0]
    assert results[2].startswith("exit code 0\n") and "3 passed" in results[2]
    assert trajectory.error is None and suite_check(task, workdir) == 1.0


def workdir_suite_workspace(tmp_path, base_url: str, **agent_settings: object):
    """A workspace on a pytest-checked task-folder suite (calc.py's absolute() is wrong), played by
    the built-in workdir agent on the local server."""
    suite = bugfix_suite(tmp_path)
    ws = api.init_workspace(tmp_path / "ws", benchmark=f"tasks:{suite}", model="openai/fake-model", api_base=base_url)
    if agent_settings:
        config = yaml.safe_load((ws.root / "wikiskill.yaml").read_text())
        config["agent"] = {**config.get("agent", {}), **agent_settings}
        (ws.root / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    return ws


class CodeInTextFirst:
    """A small model's habit: it first answers with the fixed function in its text; once told to
    act, it writes the fix with bash and finishes (under `edit_format: tools`, where code in the
    text changes no file)."""

    def __call__(self, body: dict) -> Reply | str:
        messages = body["messages"]
        if not any("called no tool" in str(m.get("content")) for m in messages):
            return f"Here is the corrected function:\n```python\n{FIXED}```"
        if messages[-1]["role"] == "user" and "called no tool" in messages[-1]["content"]:
            return Reply(tool_calls=[{"name": "bash", "arguments": {"command": f"cat > calc.py <<'EOF'\n{FIXED}EOF"}}])
        return Reply(tool_calls=[{"name": "finish", "arguments": {"answer": "absolute() fixed"}}])


@pytest.mark.parametrize("text_tools", [False, True])
def test_a_model_that_first_answers_with_code_in_text_is_told_to_act_and_then_its_fix_passes_the_check(
    tmp_path, monkeypatch, text_tools
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(CodeInTextFirst(), text_tools=text_tools) as server:
        ws = workdir_suite_workspace(tmp_path, server.base_url, edit_format="tools")
        result = api.evaluate(ws, "val")
        requests = server.requests
    runs = result.runs[0]
    assert [t.score for t in runs] == [1.0, 1.0] and all(t.prediction == "absolute() fixed" for t in runs)
    first = requests[0]["messages"][1]["content"]
    assert "calc.py (" in first and BUGGY.strip() in first  # the listing showed the file to fix
    told = [m for body in requests for m in body["messages"] if "called no tool" in str(m.get("content"))]
    assert told and all(m["role"] == "user" for m in told)
    assert len(requests) == 2 * 3  # per task: the code in text, the bash call, the finish


class BashBlocks:
    """mini-swe-agent's protocol: prose without a block first, then one block per reply: read
    calc.py, write the fix, say the finish marker with a final answer."""

    def __call__(self, body: dict) -> str:
        replies = sum(1 for m in body["messages"] if m["role"] == "assistant")
        steps = [
            "I think absolute() needs an else branch.",
            "Two at once:\n```bash\nls\n```\n```bash\ncat calc.py\n```",
            "Reading it first.\n```bash\ncat calc.py\n```",
            f"Writing the fix.\n```bash\ncat > calc.py <<'EOF'\n{FIXED}EOF\n```",
            f"Done.\n```bash\necho {FINISH_MARKER}; echo 'absolute() fixed'\n```",
        ]
        return steps[replies]


def test_the_bash_block_protocol_runs_one_block_per_reply_and_finishes_on_its_marker(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(BashBlocks()) as server:
        ws = workdir_suite_workspace(tmp_path, server.base_url, tool_protocol="bash_block")
        result = api.evaluate(ws, "val")
        requests = server.requests
    runs = result.runs[0]
    assert [t.score for t in runs] == [1.0, 1.0] and all(t.prediction == "absolute() fixed" for t in runs)
    assert len(requests) == 2 * 5 and not any("tools" in body for body in requests)
    last = max((body["messages"] for body in requests), key=len)
    assert "one command in one ```bash block" in last[0]["content"] and FINISH_MARKER in last[0]["content"]
    said = [m["content"] for m in last if m["role"] == "user"][1:]
    assert said[0].startswith("Your reply had no ```bash block") and said[1].startswith("Your reply had 2 ```bash")
    assert said[2].startswith("exit code 0\n") and "return x\n" in said[2]
    assert said[3] == "exit code 0\n(no output)"


def test_under_the_bash_block_protocol_replies_without_a_block_end_the_task_after_a_few(tmp_path):
    settings = RoleSettings(model="openai/fake-model", tool_protocol="bash_block")
    with FakeOpenAIServer(lambda body: "def absolute(x):\n    return abs(x)") as server:
        model = LiteLLMModel(
            settings.model_copy(update={"api_base": server.base_url}),
            LLMSettings(retries=0, timeout=20),
            "agent",
            Meter(),
        )
        shell = ShellAgent(model, [], SkillsSettings(), 10, protocol=ToolProtocol.BASH_BLOCK)
        trajectory = play(shell, tmp_path)
    assert len(server.requests) == MAX_FORMAT_ERRORS and trajectory.error is None
    assert trajectory.prediction == "def absolute(x):\n    return abs(x)"
    assert "One more reply without exactly one block ends the task" in server.requests[-1]["messages"][-1]["content"]


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"maintainer": {"tool_protocol": "bash_block"}}, "maintainer.tool_protocol: bash_block is the task agent's"),
        ({"agent": {"tool_protocol": "bash_block"}, "skills": {"mode": "index"}}, "offers no load_skill tool"),
        ({"agent": {"tool_protocol": "bash_block", "wiki_access": True}}, "so no read_wiki"),
    ],
)
def test_the_bash_block_protocol_is_refused_where_it_cannot_work(settings, says):
    with pytest.raises(ValidationError, match=re.escape(says)):
        Config.model_validate({"benchmark": "example-qa", **settings})


def test_the_bash_block_protocol_is_refused_on_a_suite_that_is_not_played_in_a_workdir():
    text = "benchmark: example-qa\nmodel: openai/x\nagent:\n  tool_protocol: bash_block\n"
    with pytest.raises(ConfigError, match="wikiskill.yaml: agent.tool_protocol: bash_block is for workdir suites"):
        parse_config(text, "wikiskill.yaml")
