"""A coding-agent CLI inside each Harbor task's container: the real Qwen Code, this machine's
install mounted read-only, evolved against the scripted server with every task in a container.
It works in the container's workdir (the file it writes is what the verifier there reads), loads
the proposed skill through its own `skill` tool, never sees the tests' marker, and the skills
and its private HOME leave the container before the verifier runs. A loopback endpoint, or a task
with no network, without the host's network is refused in one line, and so is an image where the
mounted node cannot start."""

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import needs, needs_docker
from harborsuites import IDS, MARKER, containers_of, harbor_suite, init_harbor, remove_images, tag_of, word_of
from scripted import SPELL, ScriptedWorld
from wikiskill import api
from wikiskill.benchmarks.harbor import HarborSuite
from wikiskill.cli import app
from wikiskill.core.errors import ConfigError
from wikiskill.environments.settings import EnvironmentSettings
from wikiskill.roles.coding_agents.in_container import check_model_network
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

needs_qwen = needs("qwen", package="@qwen-code/qwen-code@0.24.4")
LEFT_BEHIND = (
    "if [ -e /app/.qwen ] || compgen -G '/tmp/wikiskill-cli-*'; then echo 'FAILED left behind'; "
    "echo 0 > /logs/verifier/reward.txt; exit 0; fi"
)
"""The verifier fails a task whose container still holds the skills or the CLI's private HOME."""


def text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


class QwenInContainerWorld(ScriptedWorld):
    """The scripted world with the task agent played through Qwen Code: it loads `spell-letters`
    through the `skill` tool when listed, then writes the word into answer.txt with its shell
    tool (reversed only once a tool result carried the SPELL marker) and prints where it ran."""

    def __init__(self):
        super().__init__(trace_ids=IDS["train"])
        self.seen: list[str] = []

    def __call__(self, body: dict) -> Reply | str:
        messages = body["messages"]
        system = text(messages[0]) if messages[0]["role"] == "system" else ""
        if not system.startswith("You are Qwen Code"):
            return super().__call__(body) if system.startswith("You are a") else "Nothing to do."
        self.seen.append(json.dumps(body))
        prompt = "\n".join(text(m) for m in messages if m["role"] == "user")
        results = [text(m) for m in messages if m["role"] == "tool"]
        if not results and "spell-letters" in prompt:
            return Reply(
                content="Loading the skill.", tool_calls=[{"name": "skill", "arguments": {"skill": "spell-letters"}}]
            )
        if not any("WROTE" in result for result in results):
            word = word_of(re.sub(r"<system-reminder>.*?</system-reminder>", "", prompt, flags=re.DOTALL))
            answer = word[::-1] if any(SPELL in result for result in results) else word
            command = f"printf %s {answer} > answer.txt && echo WROTE in $(pwd) under $(cat /proc/1/comm)"
            return Reply(tool_calls=[{"name": "run_shell_command", "arguments": {"command": command}}])
        return "Done: answer.txt is written."


@pytest.fixture()
def suite(tmp_path):
    suite = harbor_suite(tmp_path)
    for task in IDS["train"] + IDS["val"]:
        test_sh = suite / task / "tests" / "test.sh"
        test_sh.write_text(
            test_sh.read_text().replace("mkdir -p /logs/verifier\n", f"mkdir -p /logs/verifier\n{LEFT_BEHIND}\n")
        )
    yield suite
    remove_images([tag_of(suite / "rev-cat")])


def qwen_workspace(tmp_path: Path, base_url: str, suite: Path, host_network: bool = True) -> Path:
    ws = tmp_path / "ws"
    result = init_harbor(ws, suite, base_url, "--agent", "qwen-code")
    assert result.exit_code == 0, result.output
    config = yaml.safe_load((ws / "wikiskill.yaml").read_text())
    config.update(
        {
            "harbor": {"ids": IDS},
            "proposer": {"min_trace_reads": 2},
            "concurrency": 2,
            "environment": {"host_network": host_network},
        }
    )
    (ws / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    return ws


@pytest.mark.slow
@needs_docker
@needs_qwen
def test_qwen_code_evolves_inside_each_tasks_container_loading_its_skill_through_its_skill_tool(tmp_path, suite):
    world = QwenInContainerWorld()
    with FakeOpenAIServer(world) as server:
        ws = qwen_workspace(tmp_path, server.base_url, suite)
        result = api.evolve(api.open_workspace(ws), 1)
        skilled_run = api.evaluate(api.open_workspace(ws), "train", ref="main").runs[0]

    assert result.rounds_completed == 1 and result.decisions[0] == "accepted" and result.incumbent == 1.0
    baseline = [json.loads(line) for line in (ws / "raw" / "baseline" / "val.jsonl").read_text().splitlines()]
    assert [row["score"] for row in baseline] == [0.0, 0.0]
    val = [json.loads(line) for line in (ws / "raw" / "r001" / "val.jsonl").read_text().splitlines()]
    assert [row["score"] for row in val] == [1.0, 1.0]  # the verifier read /app/answer.txt in the container
    first = json.loads((ws / "raw" / "r001" / "train" / "rev-cat.json").read_text())
    assert first["error"] is None and first["skills_loaded"] == [] and "left behind" not in first["feedback"]
    ran = [m["content"] for m in first["messages"] if m["role"] == "tool"]
    assert [result.strip() for result in ran] == ["WROTE in /app under sleep"]  # pid 1: the container's `sleep`
    assert [(t.score, t.skills_loaded) for t in skilled_run] == [(1.0, ["spell-letters"])] * 2
    calls = [call["function"]["name"] for m in skilled_run[0].messages for call in m.get("tool_calls") or []]
    assert calls == ["skill", "run_shell_command"]
    assert any("/app" in request for request in world.seen)  # Qwen Code was told its working directory
    skilled = [request for request in world.seen if SPELL in request]
    assert skilled and all('"skill"' in request for request in skilled)  # loaded through its own skill tool
    assert not any(MARKER in json.dumps(body) for body in server.requests)
    assert containers_of(ws) == []


@needs_docker
@needs_qwen
def test_a_cli_against_a_loopback_endpoint_without_the_host_network_is_refused_in_one_line(tmp_path, suite):
    ws = qwen_workspace(tmp_path, "http://127.0.0.1:9/v1", suite, host_network=False)
    before = subprocess.run(["git", "log", "--all", "--oneline"], cwd=ws, capture_output=True, text=True).stdout
    result = CliRunner().invoke(app, ["-C", str(ws), "evolve", "--rounds", "1"])
    assert result.exit_code == 1
    line = result.output.strip().splitlines()[-1]
    assert "calls http://127.0.0.1:9/v1 from inside each task's container" in line
    assert "set environment.host_network: true" in line
    assert subprocess.run(["git", "log", "--all", "--oneline"], cwd=ws, capture_output=True, text=True).stdout == before
    assert not (ws / "raw" / "baseline").exists() and containers_of(ws) == []


@needs_docker
@needs_qwen
def test_an_image_where_the_mounted_node_cannot_start_is_refused_in_one_line(tmp_path):
    suite = harbor_suite(tmp_path)
    broken = "FROM wikiskill/base:bookworm\nWORKDIR /app\nRUN rm -f /usr/lib/x86_64-linux-gnu/libstdc++.so.6*\n"
    for task in IDS["train"] + IDS["val"]:
        (suite / task / "environment" / "Dockerfile").write_text(broken)
    try:
        ws = qwen_workspace(tmp_path, "http://127.0.0.1:9/v1", suite)
        result = CliRunner().invoke(app, ["-C", str(ws), "eval", "--split", "val", "--ref", "main"])
    finally:
        remove_images([tag_of(suite / "rev-cat")])
    assert result.exit_code == 1
    line = result.output.strip().splitlines()[-1]
    assert "agent.runner: qwen-code cannot start in rev-" in line and "libstdc++.so.6" in line
    assert "needs a glibc image" in line and containers_of(ws) == []


@pytest.mark.parametrize(
    "api_base", ["http://127.0.0.1:8080/v1", "http://localhost:11434/v1", "http://[::1]:8000/v1", "http://127.0.0.2/v1"]
)
def test_every_loopback_endpoint_needs_the_host_network(api_base):
    with pytest.raises(ConfigError, match="set environment.host_network: true"):
        check_model_network(EnvironmentSettings(), api_base, "qwen-code")
    check_model_network(EnvironmentSettings(host_network=True), api_base, "qwen-code")


def test_a_remote_endpoint_is_refused_only_for_tasks_with_no_network(tmp_path):
    suite = HarborSuite(harbor_suite(tmp_path))
    with pytest.raises(ConfigError, match=r"4 task\(s\) have no network \(network_mode = 'no-network', e.g. rev-cat\)"):
        check_model_network(EnvironmentSettings(), "https://api.example.com/v1", "codex", suite.by_id.values())
    for task in suite.by_id.values():
        toml = task.folder / "task.toml"
        toml.write_text(toml.read_text().replace("allow_internet = false", "allow_internet = true"))
    check_model_network(
        EnvironmentSettings(), "https://api.example.com/v1", "codex", HarborSuite(suite.directory).by_id.values()
    )
