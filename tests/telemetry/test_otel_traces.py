"""OpenTelemetry traces of a command, received by a real OTLP/HTTP receiver on loopback
(`wikiskill.testing.otlp`, decoding the protobuf with `opentelemetry-proto`): one trace per
command with the round/step/task/model-call tree, the GenAI usage of every model call, and
neither a secret nor a validation question anywhere in what was exported."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import missing
from scripted import ScriptedWorld
from wikiskill.cli import app
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply
from wikiskill.testing.otlp import OtlpReceiver
from workspaces import edit_config

ROOT = Path(__file__).resolve().parents[2]
PRICED = "openai/gpt-4o-mini"
"""A model litellm's cost map prices, so every call carries a cost; the local server answers any name."""
FAKE_KEY = "sk-telemetry-fake-key-7f3a9c2e51d04b68"


def _otel_missing() -> str | None:
    for module in ("opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http", "opentelemetry.proto"):
        if importlib.util.find_spec(module) is None:
            return f"needs the otel extra: pip install 'wikiskill[otel]' ({module} is missing)"
    return None


@pytest.fixture(scope="module")
def otel() -> None:
    reason = _otel_missing()
    if reason is not None:
        missing(reason)


def run(*args: str) -> None:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output


class RecordingWorld(ScriptedWorld):
    """The scripted world, keeping every reply it gives."""

    def __init__(self) -> None:
        super().__init__()
        self.replies: list[Reply] = []

    def __call__(self, body: dict) -> Reply | str:
        reply = super().__call__(body)
        self.replies.append(Reply(content=reply) if isinstance(reply, str) else reply)
        return reply


@pytest.fixture(scope="module")
def world() -> RecordingWorld:
    return RecordingWorld()


@pytest.fixture(scope="module")
def two_rounds(otel, world, tmp_path_factory):
    """A two-round scripted `evolve` through the CLI, its trace sent to the receiver by
    OpenTelemetry's own variable, with a provider key in the environment."""
    ws = tmp_path_factory.mktemp("traced") / "ws"
    with (
        pytest.MonkeyPatch.context() as env,
        OtlpReceiver() as receiver,
        FakeOpenAIServer(world, prompt_cache="prefix") as server,
    ):
        env.setenv("OPENAI_API_KEY", FAKE_KEY)
        run("init", str(ws), "--benchmark", "example-qa", "--model", PRICED, "--api-base", server.base_url)
        env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
        run("-C", str(ws), "evolve", "--rounds", "2")
    return receiver


def ancestors(span, by_id) -> list[str]:
    names = []
    while span.parent_id and span.parent_id in by_id:
        span = by_id[span.parent_id]
        names.append(span.name)
    return names


@pytest.mark.slow
def test_an_evolve_is_one_trace_of_rounds_steps_tasks_and_model_calls(two_rounds):
    spans = two_rounds.spans()
    by_id = {span.span_id: span for span in spans}
    assert len({span.trace_id for span in spans}) == 1
    (root,) = [span for span in spans if not span.parent_id]
    assert root.name == "wikiskill evolve" and root.attributes["wikiskill.rounds"] == 2
    rounds = {span.attributes["wikiskill.round"]: span for span in spans if span.name.startswith("round ")}
    assert sorted(rounds) == [1, 2] and all(span.parent_id == root.span_id for span in rounds.values())
    for number, round_span in rounds.items():
        steps = {span.attributes["wikiskill.step"] for span in spans if span.parent_id == round_span.span_id}
        assert {"rollout", "maintain", "propose", "validate", "gate"} <= steps, (number, steps)

    rollouts = [span for span in spans if span.name == "rollout"]
    validations = [span for span in spans if span.name == "validation"]
    assert len(rollouts) == 2 * 12 and {span.attributes["wikiskill.split"] for span in rollouts} == {"train"}
    assert all(ancestors(span, by_id)[:2] == ["tasks train", "step rollout"] for span in rollouts)
    assert {span.attributes["wikiskill.split"] for span in validations} == {"val"}
    assert any("step validate" in ancestors(span, by_id) for span in validations)
    assert all("wikiskill.score" in span.attributes and span.attributes["wikiskill.task.id"] for span in validations)

    calls = [span for span in spans if span.attributes.get("gen_ai.operation.name") == "chat"]
    roles = Counter(span.attributes["wikiskill.role"] for span in calls)
    assert set(roles) == {"agent", "maintainer", "proposer"}
    agent_calls = [span for span in calls if span.attributes["wikiskill.role"] == "agent"]
    assert all(by_id[span.parent_id].name in ("rollout", "validation") for span in agent_calls)
    proposer_calls = [span for span in calls if span.attributes["wikiskill.role"] == "proposer"]
    assert all("step propose" in ancestors(span, by_id) for span in proposer_calls)
    reads = [span for span in spans if span.name == "execute_tool read_file"]
    assert len(reads) == 2 * 4 and all(by_id[span.parent_id].name == "step propose" for span in reads)


@pytest.mark.slow
def test_a_step_span_carries_what_its_commit_records(two_rounds):
    spans = two_rounds.spans()
    gates = sorted(
        (span for span in spans if span.name == "step gate"), key=lambda span: span.attributes["wikiskill.round"]
    )
    assert [span.attributes["wikiskill.decision"] for span in gates] == ["accepted", "rejected"]
    assert [span.attributes["wikiskill.skill"] for span in gates] == ["spell-letters", "useless-hint"]
    validates = [span for span in spans if span.name == "step validate"]
    assert validates
    assert all(len(span.attributes["wikiskill.fingerprint"]) > 8 for span in validates)
    assert all("wikiskill.score" in span.attributes for span in validates)


@pytest.mark.slow
def test_every_model_call_carries_its_tokens_and_cost(two_rounds):
    calls = [span for span in two_rounds.spans() if span.attributes.get("gen_ai.operation.name") == "chat"]
    assert calls
    for span in calls:
        attributes = span.attributes
        assert attributes["gen_ai.request.model"] == PRICED and attributes["gen_ai.provider.name"] == "openai"
        assert attributes["gen_ai.usage.input_tokens"] > 0 and attributes["gen_ai.usage.output_tokens"] > 0
        assert attributes["wikiskill.cost_usd"] > 0
        assert "gen_ai.usage.cache_read.input_tokens" in attributes
    assert any(span.attributes["gen_ai.usage.cache_read.input_tokens"] > 0 for span in calls)


@pytest.mark.slow
def test_no_secret_and_no_validation_question_is_exported(two_rounds):
    exported = two_rounds.raw
    assert exported and FAKE_KEY.encode() not in exported
    questions = [json.loads(line)["question"] for line in (ROOT / "benchmarks/example-qa/val.jsonl").open()]
    assert not [question for question in questions if question.encode() in exported]


def strings_in(value: object) -> list[str]:
    """The strings of a reply's text or a tool call's arguments, JSON taken apart."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return [value]
        return strings_in(parsed) if isinstance(parsed, (dict, list)) else [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in strings_in(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings_in(item)]
    return []


@pytest.mark.slow
def test_no_reply_answer_or_tool_argument_of_a_model_is_exported(two_rounds, world):
    texts = [text for reply in world.replies for text in strings_in(reply.content or "")]
    texts += [
        text for reply in world.replies for call in reply.tool_calls or [] for text in strings_in(call["arguments"])
    ]
    # each line long enough not to be a name a span may carry (a skill's, a tool's)
    lines = {line.strip() for text in texts for line in text.splitlines() if len(line.strip()) >= 16}
    answers = [text for text in texts if "<answer>" in text]
    assert answers and len(lines) > 20  # the agent's answers, the maintainer's pages, the proposer's skills
    assert not [line for line in lines if line.encode() in two_rounds.raw]


@pytest.mark.slow
def test_telemetry_otlp_in_the_settings_turns_the_trace_on(otel, tmp_path):
    ws = tmp_path / "ws"
    with OtlpReceiver() as receiver, FakeOpenAIServer(ScriptedWorld()) as server:
        run("init", str(ws), "--benchmark", "example-qa", "--model", "openai/fake-model", "--api-base", server.base_url)
        edit_config(_workspace(ws), **{"telemetry.otlp": receiver.url})
        run("-C", str(ws), "eval", "--split", "val")
    names = Counter(span.name for span in receiver.spans())
    assert names["wikiskill eval"] == 1 and names["validation"] == 6


def test_without_the_extra_a_configured_trace_fails_in_one_line_naming_it(tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    run(
        "init", str(ws), "--benchmark", "example-qa", "--model", "openai/fake-model", "--api-base", "http://127.0.0.1:9"
    )
    edit_config(_workspace(ws), **{"telemetry.otlp": "http://127.0.0.1:9"})
    head = subprocess.run(["git", "-C", str(ws), "rev-parse", "main"], capture_output=True, text=True).stdout
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # as if the extra were not installed
    result = CliRunner().invoke(app, ["-C", str(ws), "evolve", "--rounds", "1"])
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "pip install 'wikiskill[otel]'" in lines[0] and "telemetry.otlp" in lines[0]
    assert subprocess.run(["git", "-C", str(ws), "rev-parse", "main"], capture_output=True, text=True).stdout == head


OFF_RUN = """
import sys
from pathlib import Path
from wikiskill import api
ws = Path(sys.argv[1])
api.init_workspace(ws, benchmark="example-qa", model="openai/fake-model", api_base=sys.argv[2])
api.evaluate(api.open_workspace(ws), "val")
loaded = sorted(name for name in sys.modules if name == "opentelemetry" or name.startswith("opentelemetry."))
print("loaded:", loaded)
"""


@pytest.mark.slow
def test_without_telemetry_configured_model_calls_import_nothing_of_opentelemetry(otel, tmp_path):
    env = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    with FakeOpenAIServer(ScriptedWorld()) as server:
        out = subprocess.run(
            [sys.executable, "-c", OFF_RUN, str(tmp_path / "ws"), server.base_url],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        ).stdout
    assert out.strip().splitlines()[-1] == "loaded: []"


def _workspace(path: Path):
    from wikiskill.store.workspace import Workspace

    return Workspace(path)


def test_a_secret_in_an_attribute_is_exported_redacted(otel, monkeypatch):
    from wikiskill.telemetry.settings import TelemetrySettings
    from wikiskill.telemetry.spans import annotate, command, step_span

    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    with OtlpReceiver() as receiver:
        with command("evolve", TelemetrySettings(otlp=receiver.url)), step_span("propose", 1):
            annotate(skill=f"leaks-{FAKE_KEY}")
    (step,) = [span for span in receiver.spans() if span.name == "step propose"]
    assert step.attributes["wikiskill.skill"] == "leaks-[REDACTED]"
    assert FAKE_KEY.encode() not in receiver.raw


OUTAGE_BOUND_S = 60
"""An `eval` with the endpoint down takes its usual seconds plus one bounded connect."""


@pytest.mark.slow
def test_with_the_endpoint_down_a_command_finishes_in_bounded_time_and_warns_once_naming_it(
    otel, tmp_path, monkeypatch, caplog
):
    ws = tmp_path / "ws"
    with socket.socket() as probe:  # a loopback port where nothing listens: bound, then closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with FakeOpenAIServer(ScriptedWorld()) as server:
        run("init", str(ws), "--benchmark", "example-qa", "--model", "openai/fake-model", "--api-base", server.base_url)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
        began = time.monotonic()
        with caplog.at_level(logging.WARNING):
            run("-C", str(ws), "eval", "--split", "val")
        seconds = time.monotonic() - began
    assert seconds < OUTAGE_BOUND_S
    warnings = [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
    assert warnings == [
        f"warning: telemetry: the OTLP endpoint http://127.0.0.1:{port}/v1/traces could not be reached "
        "(Connection refused); traces are off for this command"
    ]
