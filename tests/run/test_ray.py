"""Tasks on a real local Ray (2 CPUs, one session for the whole module: Ray is slow to start):
an eval and a full round give exactly what the local executor gives, the command itself writes
the result cache, a command pointed at the cluster by RAY_ADDRESS ships what its workers need, and
a local Ray a command starts for itself admits no client without the command's token."""

import dataclasses
import os
import re
import shutil
import subprocess
import sys
import threading

import psutil
import pytest
import ray

from scripted import ScriptedWorld
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.core.errors import WikiskillError
from wikiskill.testing.fakeserver import FakeOpenAIServer
from workspaces import edit_config

pytestmark = pytest.mark.slow

COMMIT = re.compile(r"\b[0-9a-f]{10}\b")
"""A commit id in a wiki page: the two workspaces' commits differ in their dates and config."""


@pytest.fixture(scope="module")
def local_ray() -> str:
    """A Ray this test process started (the executor uses it as it is); yields its address.
    Without token authentication, so that Ray writes no token into the home folder."""
    os.environ["RAY_AUTH_MODE"] = "disabled"
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()
    del os.environ["RAY_AUTH_MODE"]


def test_an_eval_on_ray_gives_the_local_executors_trajectories_and_scores(tmp_path, local_ray):
    with FakeOpenAIServer(ScriptedWorld()) as server:
        ws = api.init_workspace(tmp_path / "ws", "example-qa", "openai/fake-model", server.base_url)
        local = api.evaluate(ws, "val")
        shutil.rmtree(ws.state_dir / "results")
        on_ray = api.evaluate(ws, "val", options=RunOptions(executor="ray", workers=2))
        asked = [body["messages"][-1]["content"] for body in server.requests]
    tasks = len(local.evaluation.scores)
    assert tasks >= 6 and len(asked) == 2 * tasks and len(set(asked)) == tasks  # each task once per executor
    assert on_ray.runs == local.runs and on_ray.evaluation == local.evaluation
    journals = list((ws.state_dir / "results").glob("*/*.jsonl"))
    assert journals and {path.name.split("-")[0] for path in journals} == {str(os.getpid())}


def test_workers_asking_for_a_resource_no_node_offers_fail_the_command_at_once_naming_it(tmp_path, local_ray):
    with FakeOpenAIServer(ScriptedWorld()) as server:
        ws = api.init_workspace(tmp_path / "ws", "example-qa", "openai/fake-model", server.base_url)
        edit_config(ws, **{"ray.resources": {"gpu-box": 1}})
        with pytest.raises(WikiskillError) as refused:
            api.evaluate(ws, "val", options=RunOptions(executor="ray", workers=2))
        asked = len(server.requests)
    assert "{'gpu-box': 1.0}" in str(refused.value) and "CPU" in str(refused.value)
    assert asked == 0 and not list((ws.state_dir / "results").glob("*/*.jsonl"))


def test_a_full_round_on_ray_commits_what_the_local_executor_commits(tmp_path, local_ray):
    outcomes = {}
    for executor in ("local", "ray"):
        with FakeOpenAIServer(ScriptedWorld()) as server:
            ws = api.init_workspace(tmp_path / executor, "example-qa", "openai/fake-model", server.base_url)
            workers = 2 if executor == "ray" else 1
            result = api.evolve(ws, 1, options=RunOptions(executor=executor, workers=workers))
        folders = {
            folder: {path: COMMIT.sub("<commit>", text) for path, text in ws.read_files("main", folder).items()}
            for folder in ("raw", "wiki", "skills")
        }
        outcomes[executor] = (result, folders, [dataclasses.asdict(row) for row in api.round_log(ws)])
    local, on_ray = outcomes["local"], outcomes["ray"]
    assert local[0].rounds_completed == 1 and local[1]["skills"]  # the round merged a skill
    # one part at a time, so that a difference is shown whole: the result, the round log, each folder
    assert on_ray[0] == local[0]
    assert on_ray[2] == local[2]
    for folder in ("skills", "wiki", "raw"):
        assert on_ray[1][folder] == local[1][folder], folder


def test_a_command_given_a_cluster_by_ray_address_ships_its_workers_what_they_need(tmp_path, local_ray):
    with FakeOpenAIServer(ScriptedWorld()) as server:
        ws = api.init_workspace(tmp_path / "ws", "example-qa", "openai/fake-model", server.base_url)
        local = api.evaluate(ws, "val")
        shutil.rmtree(ws.state_dir / "results")
        run = subprocess.run(
            [sys.executable, "-m", "wikiskill", "-C", str(ws.root), "eval", "--executor", "ray", "--workers", "2"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "RAY_ADDRESS": local_ray, "OPENAI_API_KEY": "sk-test"},
        )
        asked = [body["messages"][-1]["content"] for body in server.requests]
    assert run.returncode == 0, run.stderr
    tasks = len(local.evaluation.scores)
    assert len(asked) == 2 * tasks and len(set(asked)) == tasks
    assert f"mean score {local.evaluation.mean:.3f}" in run.stdout and local.evaluation.fingerprint in run.stdout
    assert sum(len(path.read_text().splitlines()) for path in (ws.state_dir / "results").glob("*/*.jsonl")) == tasks


class ProbingWorld(ScriptedWorld):
    """The scripted world that, at the first model call of the command `process`, tries its local
    Ray's GCS as a client without the command's token would (another user, another machine)."""

    def __init__(self):
        super().__init__()
        self.process: subprocess.Popen | None = None
        self.probe: subprocess.CompletedProcess | None = None
        self.lock = threading.Lock()

    def __call__(self, body: dict):
        with self.lock:
            if self.probe is None:
                self.probe = probe_gcs(self.process.pid)
        return super().__call__(body)


def probe_gcs(command_pid: int) -> subprocess.CompletedProcess:
    """A fresh client's attempt at the GCS that `command_pid` started: it lists the GCS's keys."""
    gcs = next(p for p in psutil.Process(command_pid).children(recursive=True) if p.name() == "gcs_server")
    port = next(c.laddr.port for c in psutil.net_connections("inet") if c.pid == gcs.pid and c.status == "LISTEN")
    client = f"GcsClient(address='127.0.0.1:{port}')"
    code = f"from ray._raylet import GcsClient; print({client}.internal_kv_keys(b'', None, timeout=10))"
    env = {name: value for name, value in os.environ.items() if not name.startswith("RAY_")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)


def test_a_local_ray_started_for_a_command_refuses_a_client_without_its_token_and_writes_none_home(tmp_path):
    world = ProbingWorld()
    home = tmp_path / "home"
    env = {**{name: value for name, value in os.environ.items() if not name.startswith("RAY_")}, "HOME": str(home)}
    with FakeOpenAIServer(world) as server:
        ws = api.init_workspace(tmp_path / "ws", "example-qa", "openai/fake-model", server.base_url)
        command = [sys.executable, "-m", "wikiskill", "-C", str(ws.root), "eval", "--executor", "ray", "--workers", "1"]
        world.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        out, err = world.process.communicate(timeout=300)
    assert world.process.returncode == 0, err
    assert world.probe is not None and world.probe.returncode != 0
    assert "AuthenticationError" in world.probe.stderr and "Authentication token is missing" in world.probe.stderr
    assert "mean score" in out and not (home / ".ray").exists()  # the token was the command's, written nowhere
