"""Provider faults from the local server during `evolve`: 429 with Retry-After, 500/503, timeouts
and truncated bodies are retried with backoff and jitter; a provider that stays down stops the run
with one line and a non-zero exit, leaving a consistent workspace that the next `evolve` resumes."""

import json
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import git
from scripted import ScriptedWorld
from wikiskill.cli import app
from wikiskill.core.errors import ProviderUnavailable
from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.llm.settings import LLMSettings
from wikiskill.roles.settings import RoleSettings
from wikiskill.testing.fakeserver import FakeOpenAIServer
from wikiskill.testing.fakeserver import Reply as ServerReply
from workspaces import first_parent_steps

TRAIN = Path(__file__).resolve().parents[2] / "benchmarks/example-qa/train.jsonl"
ROUND_STEPS = [None, None, "baseline", "rollout", "maintain", "gate"]  # init, config, one round


def role_of(body: dict) -> str:
    system = body["messages"][0]["content"]
    if system.startswith("You are a Wiki Maintainer Agent"):
        return "maintainer"
    return "proposer" if system.startswith("You are a Skill Proposer Agent") else "agent"


class FlakyProvider:
    """The scripted world behind a provider that fails some requests.

    `faults` are (role, text in the last message, reply) triples, each used once, by the first
    matching request; `down` is a set of (role, text) that always get a 503.
    """

    def __init__(self, faults=(), down=()):
        self.world = ScriptedWorld()
        self.faults = list(faults)
        self.down = set(down)
        self.log: list[tuple[float, str, str, int]] = []  # (time, role, last message, status)
        self._lock = threading.Lock()

    def __call__(self, body: dict):
        role, last = role_of(body), str(body["messages"][-1].get("content") or "")
        with self._lock:
            fault = next((f for f in self.faults if f[0] == role and f[1] in last), None)
            if fault:
                self.faults.remove(fault)
            reply = (
                fault[2]
                if fault
                else next((ServerReply(status=503) for r, text in self.down if r == role and text in last), None)
            )
            self.log.append((time.monotonic(), role, last, reply.status if reply else 200))
        return reply or self.world(body)


def new_workspace(tmp_path, server, retries: int) -> str:
    ws = tmp_path / "ws"
    result = CliRunner().invoke(
        app,
        ["init", str(ws), "--benchmark", "example-qa", "--model", "openai/fake-model", "--api-base", server.base_url],
    )
    assert result.exit_code == 0, result.output
    with open(ws / "wikiskill.yaml", "a") as config:
        config.write(f"llm:\n  retries: {retries}\n  timeout: 0.5\n")
    git(ws, "commit", "-qam", "fast retries for the test")
    return str(ws)


def evolve(ws: str):
    return CliRunner().invoke(app, ["-C", ws, "evolve", "--rounds", "1"])


def test_transient_faults_are_retried(tmp_path):
    faults = [
        ("agent", "'strawberry'", ServerReply(status=429, headers={"Retry-After": "1"})),
        ("agent", "'banana'", ServerReply(status=500)),
        ("agent", "'planet'", ServerReply(status=503)),
        ("agent", "'balloon'", ServerReply(content="<answer>x</answer>", truncate=True)),
        ("maintainer", "", ServerReply(delay=1.5)),  # longer than llm.timeout
        ("proposer", "", ServerReply(status=503, content="overloaded")),
        ("proposer", "", ServerReply(content="x", truncate=True)),
    ]
    provider = FlakyProvider(faults)
    with FakeOpenAIServer(provider) as server:
        ws = new_workspace(tmp_path, server, retries=3)
        result = evolve(ws)
    assert result.exit_code == 0, result.output
    assert provider.faults == []  # every fault was served, and every one was survived
    assert first_parent_steps(ws) == ROUND_STEPS
    limited = [at for at, role, last, _ in provider.log if role == "agent" and "'strawberry'" in last]
    assert limited[1] - limited[0] >= 0.95  # Retry-After: 1 was honoured
    assert git(ws, "status", "--porcelain") == ""


def test_a_provider_that_stays_down_stops_cleanly_and_evolve_resumes(tmp_path):
    down = {("agent", word) for word in ("'banana'", "'planet'", "'balloon'")}
    provider = FlakyProvider(down=down)
    with FakeOpenAIServer(provider) as server:
        ws = new_workspace(tmp_path, server, retries=1)
        result = evolve(ws)
        assert result.exit_code == 1
        error = result.output.strip().splitlines()[-1]  # after the progress bars of the finished steps
        assert error.startswith("error: agent model openai/fake-model:") and error.endswith(
            "(gave up after 2 attempts)"
        )
        assert "Traceback" not in result.output
        assert git(ws, "status", "--porcelain") == ""
        assert git(ws, "for-each-ref", "refs/heads/skill").strip() == ""
        assert first_parent_steps(ws) in (ROUND_STEPS[:3], ROUND_STEPS[:2])  # the failed step left nothing
        answered = {last for _, role, last, status in provider.log if role == "agent" and status == 200}
        provider.down.clear()
        first = len(provider.log)
        result = evolve(ws)
        assert result.exit_code == 0, result.output
    assert first_parent_steps(ws) == ROUND_STEPS
    again = {last for _, role, last, _ in provider.log[first:] if role == "agent"}
    train = {json.loads(line)["question"] for line in TRAIN.read_text().splitlines()}
    assert answered & train and not answered & train & again  # no finished rollout task was asked again
    assert git(ws, "status", "--porcelain") == ""


class _RateLimited(Exception):
    status_code = 429


@pytest.mark.parametrize("attempt", [0, 1, 2])
def test_backoff_grows_with_jitter_and_is_bounded(attempt):
    model = LiteLLMModel(RoleSettings(model="openai/x"), LLMSettings(retries=3), "agent", Meter())
    call = model.call([{"role": "user", "content": "hi"}])
    call.attempt = attempt + 1
    delays = {call.recover(_RateLimited("slow down")) for _ in range(20)}
    base = 0.5 * 2**attempt
    assert all(0.5 * base <= delay <= 1.5 * base for delay in delays)
    assert len(delays) > 10  # jittered, so concurrent retries spread out
    call.attempt = 4
    with pytest.raises(ProviderUnavailable, match="gave up after 4 attempts"):
        call.recover(_RateLimited("slow down"))
