"""`tracking: mlflow` against a real `mlflow server` (sqlite backend, on loopback): one MLflow run
per workspace evolution, a nested run per round with its params, metrics, tags and artifacts,
logged once, and continued by a resumed run after kill -9."""

import importlib.util
import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from rich.console import Console

from conftest import missing
from inprocess import WorldModel, evolve_scripted, scripted_workspace
from scripted import ScriptedWorld
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.core.errors import ConfigError
from wikiskill.loop.harness import QuietReporter
from wikiskill.store.rounds import round_state
from wikiskill.store.settings import load_config
from wikiskill.store.trailers import Step
from wikiskill.store.workspace import Workspace
from wikiskill.testing.fakeserver import FakeOpenAIServer
from workspaces import until

MLFLOW_MISSING = importlib.util.find_spec("mlflow") is None
SERVER_START_S = 120


def needs_mlflow() -> None:
    """Skip without MLflow (`pip install 'wikiskill[mlflow]'`), except under CI=true, where its
    absence fails the test."""
    if MLFLOW_MISSING:
        reason = "needs MLflow: pip install 'wikiskill[test]' (or mlflow)"
        missing(reason)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def mlflow_uri(tmp_path_factory):
    """A real `mlflow server` on a free loopback port, shared by every test (it takes seconds to start)."""
    needs_mlflow()
    root = tmp_path_factory.mktemp("mlflow")
    port = free_port()
    log = open(root / "server.log", "wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
         "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}", "--artifacts-destination", str(root / "artifacts")],
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    uri = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        if server.poll() is not None:
            raise AssertionError((root / "server.log").read_text(errors="replace")[-3000:])
        try:
            with urllib.request.urlopen(f"{uri}/health", timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False

    try:
        until(healthy, timeout=SERVER_START_S)
        yield uri
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


def client(uri: str):
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri)


def track(ws: Workspace) -> None:
    (ws.root / "wikiskill.yaml").write_text((ws.root / "wikiskill.yaml").read_text() + "tracking: mlflow\n")


def evolution_run(uri: str, ws: Path):
    """The one active MLflow run named as this workspace's (its git tag), with its nested runs by name."""
    from mlflow.entities import ViewType

    tags = Workspace(ws).refs("refs/tags/tracking/mlflow/")
    assert len(tags) == 1, tags
    run = client(uri).get_run(next(iter(tags)).removeprefix("tracking/mlflow/"))
    nested = client(uri).search_runs(
        [run.info.experiment_id], f"tags.`mlflow.parentRunId` = '{run.info.run_id}'", run_view_type=ViewType.ACTIVE_ONLY
    )
    return run, {child.info.run_name: child for child in nested}


def steps(uri: str, run_id: str, metric: str) -> list[int]:
    return sorted(m.step for m in client(uri).get_metric_history(run_id, metric))


def artifact(uri: str, run_id: str, name: str, into: Path) -> str:
    from mlflow.artifacts import download_artifacts

    return Path(download_artifacts(run_id=run_id, artifact_path=name, dst_path=str(into), tracking_uri=uri)).read_text()


@pytest.fixture(scope="module")
def evolved(mlflow_uri, tmp_path_factory):
    """A two-round scripted run (round 1 accepted, round 2 rejected) tracked in MLflow, its model
    calls metered on the local OpenAI-compatible server."""
    with FakeOpenAIServer(ScriptedWorld()) as server, pytest.MonkeyPatch.context() as env:
        path = tmp_path_factory.mktemp("tracked") / "ws"
        ws = api.init_workspace(path, "example-qa", "openai/fake-model", server.base_url)
        track(ws)
        env.setenv("MLFLOW_TRACKING_URI", mlflow_uri)
        result = api.evolve(ws, rounds=2)
    assert [d.value for d in result.decisions] == ["accepted", "rejected"]
    return ws


def test_without_the_extra_tracking_mlflow_fails_in_one_line_naming_it(tmp_path, monkeypatch):
    ws = scripted_workspace(tmp_path / "ws")
    track(ws)
    monkeypatch.setitem(sys.modules, "mlflow", None)  # what the import system reads as not installed
    with pytest.raises(ConfigError) as failed:
        load_config(ws.root)
    assert "wikiskill.yaml, line " in str(failed.value)
    assert str(failed.value).endswith(": tracking: mlflow needs MLflow: pip install 'wikiskill[mlflow]'")
    assert "\n" not in str(failed.value)


def test_tracking_without_a_tracking_uri_fails_in_one_line_before_anything_is_written(tmp_path, monkeypatch):
    needs_mlflow()
    ws = scripted_workspace(tmp_path / "ws")
    track(ws)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    before = ws.head()
    with pytest.raises(ConfigError, match="tracking: mlflow needs MLFLOW_TRACKING_URI"):
        evolve_scripted(ws, rounds=1)
    assert ws.head() == before and not ws.refs("refs/tags/")


def evolve_shown(ws: Workspace, rounds: int = 1) -> tuple[list[str], float]:
    """`evolve` of the scripted world, in process: the lines it showed and the seconds it took."""
    shown = io.StringIO()
    model = WorldModel(ScriptedWorld())
    options = RunOptions(model_factory=lambda role: model, console=Console(file=shown, width=400))
    began = time.monotonic()
    api.evolve(ws, rounds, options)
    return shown.getvalue().splitlines(), time.monotonic() - began


OUTAGE_BOUND_S = 60
"""A run with the tracking server down takes its usual time (seconds here) plus one bounded
connect; the MLflow client's own retries took minutes."""


@pytest.mark.slow  # imports MLflow
def test_with_the_server_down_evolve_finishes_in_bounded_time_and_warns_once_naming_it(tmp_path, monkeypatch):
    needs_mlflow()
    ws = scripted_workspace(tmp_path / "ws")
    track(ws)
    port = free_port()  # bound, then closed: nothing listens there
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://person:hunter22@127.0.0.1:{port}")
    shown, seconds = evolve_shown(ws)
    assert seconds < OUTAGE_BOUND_S
    assert api.status(ws).rounds == 1
    warnings = [line for line in shown if "could not reach" in line]
    assert warnings == [
        f"warning: tracking: mlflow could not reach http://127.0.0.1:{port} (Connection refused); tracking is "
        "off for this command, and the next command that reaches it logs the rounds it missed"
    ]
    assert not any("hunter22" in line for line in shown)
    assert not ws.refs("refs/tags/tracking/") and not (ws.state_dir / "mlflow.json").exists()


@pytest.mark.slow
def test_rounds_run_while_the_server_was_down_are_logged_by_the_next_evolve_that_reaches_it(
    mlflow_uri, tmp_path, monkeypatch
):
    ws = scripted_workspace(tmp_path / "ws")
    track(ws)
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", f"outage-{time.monotonic_ns()}")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    evolve_shown(ws)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_uri)
    shown, _ = evolve_shown(ws)
    assert not any("could not reach" in line for line in shown)
    parent, nested = evolution_run(mlflow_uri, ws.root)
    assert sorted(nested) == ["r001", "r002"]
    assert steps(mlflow_uri, parent.info.run_id, "round") == [0, 1, 2]


@pytest.mark.slow
def test_a_two_round_run_is_one_mlflow_run_with_a_nested_run_per_round(evolved, mlflow_uri):
    run, nested = evolution_run(mlflow_uri, evolved.root)
    assert run.info.status == "FINISHED" and run.info.run_name == "evolution"
    assert sorted(nested) == ["r001", "r002"]
    assert all(child.info.status == "FINISHED" for child in nested.values())
    params = run.data.params
    assert (params["benchmark"], params["tracking"], params["gate.policy"]) == ("example-qa", "mlflow", "strict")
    baseline = next(c for c in reversed(Workspace(evolved.root).log()) if c.meta.step == Step.BASELINE)
    assert params["fingerprint"] == baseline.meta.fingerprint
    assert steps(mlflow_uri, run.info.run_id, "val_incumbent") == [0, 1, 2]  # the parent's charts, by round
    assert json.loads((evolved.state_dir / "mlflow.json").read_text())["run_id"] == run.info.run_id


@pytest.mark.slow
def test_each_nested_run_carries_its_rounds_metrics_tags_and_artifacts(evolved, mlflow_uri, tmp_path):
    _, nested = evolution_run(mlflow_uri, evolved.root)
    for number, decision, skill in ((1, "accepted", "spell-letters"), (2, "rejected", "useless-hint")):
        child = nested[f"r{number:03d}"]
        gate = round_state(evolved, number).gate.meta
        tags, metrics = child.data.tags, child.data.metrics
        assert (tags["decision"], tags["action"], tags["skill"]) == (decision, "create", skill)
        assert tags["policy"] == gate.policy == "strict"
        assert metrics["val_candidate"] == pytest.approx(gate.score)
        assert metrics["val_incumbent"] == pytest.approx(gate.incumbent)
        assert metrics["train_score"] == pytest.approx(round_state(evolved, number).rollout.meta.score)
        assert metrics["val_tasks"] == gate.tasks == 6
        assert metrics["val_tasks_fixed"] + metrics["val_tasks_broken"] + metrics["val_tasks_unchanged"] == 6
        assert metrics["tokens/agent"] > 0 and metrics["tokens/proposer"] > 0 and "cost_usd/agent" in metrics
        assert child.data.params["fingerprint"] == gate.fingerprint or decision == "rejected"
        assert child.data.params["benchmark"] == "example-qa"
        diff = artifact(mlflow_uri, child.info.run_id, "proposal.diff", tmp_path / str(number))
        assert f"+name: {skill}" in diff
        impact = artifact(mlflow_uri, child.info.run_id, "skill-impact.md", tmp_path / str(number))
        assert impact.startswith(f"## r{number:03d} · create · {skill} · {decision.upper()}")
    assert nested["r001"].data.metrics["val_tasks_fixed"] > 0 == nested["r002"].data.metrics["val_tasks_fixed"]


@pytest.mark.slow
def test_logging_again_logs_no_round_twice_and_finds_the_run_with_its_id_file_lost(evolved, mlflow_uri):
    from wikiskill.integrations.tracking import open_tracker

    run, before = evolution_run(mlflow_uri, evolved.root)
    (evolved.state_dir / "mlflow.json").unlink()
    half_logged = client(mlflow_uri).create_run(  # what a kill -9 while logging round 2 leaves
        run.info.experiment_id,
        tags={"mlflow.parentRunId": run.info.run_id, "wikiskill.round": "2"},
        run_name="r002",
    )
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MLFLOW_TRACKING_URI", mlflow_uri)
        tracker = open_tracker(evolved, load_config(evolved.root), QuietReporter())
        tracker.sync()
        tracker.sync()
    again, nested = evolution_run(mlflow_uri, evolved.root)
    assert again.info.run_id == run.info.run_id
    assert sorted(nested) == ["r001", "r002"]
    assert {name: child.info.run_id for name, child in nested.items()} == {
        name: child.info.run_id for name, child in before.items()
    }
    assert client(mlflow_uri).get_run(half_logged.info.run_id).info.lifecycle_stage == "deleted"
    assert steps(mlflow_uri, run.info.run_id, "val_incumbent") == [0, 1, 2]
    assert steps(mlflow_uri, nested["r001"].info.run_id, "val_candidate") == [1]


@pytest.mark.slow
def test_kill_9_of_a_tracked_evolve_then_resume_continues_the_same_mlflow_run(mlflow_uri, tmp_path):
    """Killed once round 1's nested run exists on the server (mid-logging or just after), the
    resumed `wikiskill evolve` logs into the same MLflow run, and logs each round once."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import kill_resume

    experiment = f"kill-{time.monotonic_ns()}"
    env = {**os.environ, "MLFLOW_TRACKING_URI": mlflow_uri, "MLFLOW_EXPERIMENT_NAME": experiment}
    with FakeOpenAIServer(ScriptedWorld(), latency=0.02) as server:
        ws = kill_resume.new_workspace(tmp_path / "ws", server.base_url)
        track(Workspace(ws))
        command = [*kill_resume.wikiskill_command(), *kill_resume.evolve_argv(ws, "--rounds", "2")]
        run = subprocess.Popen(command, env=env, start_new_session=True, stdout=subprocess.DEVNULL)
        try:
            mlflow = client(mlflow_uri)

            def round_1_logged() -> bool:
                assert run.poll() is None, "the run ended before it was killed"
                found = mlflow.get_experiment_by_name(experiment)
                return found is not None and bool(
                    mlflow.search_runs([found.experiment_id], "attributes.run_name = 'r001'")
                )

            until(round_1_logged, timeout=240)
            os.killpg(run.pid, signal.SIGKILL)
            run.wait(timeout=30)
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
        assert kill_resume.completed_rounds(ws) == 1
        resumed = subprocess.run(
            [*kill_resume.wikiskill_command(), *kill_resume.evolve_argv(ws, "--rounds", "1")],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert resumed.returncode == 0, resumed.stderr
    assert kill_resume.completed_rounds(ws) == 2
    parent, nested = evolution_run(mlflow_uri, ws)
    assert parent.info.status == "FINISHED"
    assert sorted(nested) == ["r001", "r002"]
    assert all(child.info.status == "FINISHED" for child in nested.values())
    assert steps(mlflow_uri, parent.info.run_id, "round") == [0, 1, 2]  # each round landed once
    assert len(client(mlflow_uri).search_runs([parent.info.experiment_id], "attributes.run_name = 'evolution'")) == 1


@pytest.mark.slow  # imports MLflow
def test_a_server_that_drops_every_request_costs_a_bounded_time_and_one_warning(tmp_path, monkeypatch):
    """It accepts the connect, then closes each connection unanswered: the client's own retries
    would take minutes; wikiskill bounds them and goes on without tracking."""
    needs_mlflow()
    ws = scripted_workspace(tmp_path / "ws")
    track(ws)
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def drop_every_connection() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                listener.accept()[0].close()
            except TimeoutError:
                continue

    dropper = threading.Thread(target=drop_every_connection, daemon=True)
    dropper.start()
    port = listener.getsockname()[1]
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{port}")
    try:
        shown, seconds = evolve_shown(ws)
    finally:
        stop.set()
        dropper.join()
        listener.close()
    assert seconds < OUTAGE_BOUND_S
    assert api.status(ws).rounds == 1
    warnings = [line for line in shown if "could not reach" in line]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"warning: tracking: mlflow could not reach http://127.0.0.1:{port} (")


@pytest.mark.slow  # imports MLflow
def test_a_server_that_never_accepts_gives_up_at_the_connect_bound_and_warns_once(tmp_path, monkeypatch):
    """A listening socket that never accepts, its backlog full: the kernel answers no connect, so
    only the connect's own bound ends the wait."""
    needs_mlflow()
    ws = scripted_workspace(tmp_path / "ws")
    track(ws)
    with socket.create_server(("127.0.0.1", 0), backlog=0) as listener:
        port = listener.getsockname()[1]
        queued: list[socket.socket] = []
        while True:  # connects the kernel completes unaccepted, until the backlog is full
            try:
                queued.append(socket.create_connection(("127.0.0.1", port), timeout=0.5))
            except TimeoutError:
                break
        monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{port}")
        try:
            shown, seconds = evolve_shown(ws)
        finally:
            for connection in queued:
                connection.close()
    assert seconds < OUTAGE_BOUND_S
    assert api.status(ws).rounds == 1
    assert [line for line in shown if "could not reach" in line] == [
        f"warning: tracking: mlflow could not reach http://127.0.0.1:{port} (no answer within 3 s); tracking is "
        "off for this command, and the next command that reaches it logs the rounds it missed"
    ]
    assert not ws.refs("refs/tags/tracking/") and not (ws.state_dir / "mlflow.json").exists()
