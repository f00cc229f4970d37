"""A Harbor suite on a real two-node Ray cluster on one machine (Ray's own multi-node harness: a
head with no container resource and a second node offering `docker`, each a Ray node of its own
processes): the tasks run in containers on the second node and score as on one node, though the
suite's folder is moved away while they run (the workers read it only from the archive the command
shipped by digest through Ray's object store). A node killed mid-eval (its raylet and every worker
under it) loses no task: each is started again elsewhere and scored, the command says so in one
line, Ray's own messages stay out of its terminal, in its ray.log, and the containers the lost
node's workers left are removed by the workers that start after them (a worker on a cluster node
sweeps its node's containers whose owner is dead). A task whose check cannot run on the node that
tried it first is retried on the other node after the backoff and scored there; one whose check
runs nowhere is tried on alternating nodes and recorded as infra exactly as a retry in place
records it."""

import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest
import yaml

from conftest import missing, needs_docker
from harborsuites import containers_of, image_id, init_harbor, remove_images, tag_of, word_of, write_harbor_task
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.loop.evaluating import retry_trailers
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply
from workspaces import edit_config, until

pytestmark = [pytest.mark.slow, needs_docker]

WORDS = {"rev-ant": "ant", "rev-bee": "bee", "rev-cow": "cow", "rev-elk": "elk", "rev-gnu": "gnu", "rev-yak": "yak"}
IDS = {"train": ["rev-ant", "rev-bee"], "val": ["rev-cow", "rev-elk", "rev-gnu", "rev-yak"]}
FAST_HEALTH_CHECKS = {
    "health_check_period_ms": 500,
    "health_check_timeout_ms": 500,
    "health_check_failure_threshold": 3,
}
"""A dead node is known within seconds, not Ray's default half a minute."""
RAY_LINE = re.compile(r"\(raylet\)|\.cc:\d+|\.py:\d+ -- ")
"""A line of Ray's own: relayed from a raylet, from its C++ core, or from its Python logger."""


class ReversingWorld:
    """Plays every task right (reverses the word into answer.txt, then finishes); `on_agent` runs at
    each task's first model call, `delay_s` slows each call so that tasks overlap."""

    def __init__(self, on_agent=None, delay_s: float = 0.0):
        self.on_agent, self.delay_s = on_agent, delay_s
        self.lock = threading.Lock()
        self.firsts = 0

    def __call__(self, body: dict) -> Reply | str:
        messages = body["messages"]
        done = sum(1 for m in messages if m["role"] == "assistant")
        if done == 0 and self.on_agent:
            with self.lock:
                self.firsts += 1
                self.on_agent(self.firsts)
        time.sleep(self.delay_s)
        if done == 0:
            word = word_of(messages[1]["content"])
            return Reply(
                tool_calls=[{"name": "bash", "arguments": {"command": f"printf %s {word[::-1]} > answer.txt"}}]
            )
        return Reply(tool_calls=[{"name": "finish", "arguments": {"answer": "written"}}])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A head node (1 CPU, no `docker`) and a second node offering `docker: 2`, each offering
    ONE_PER_NODE once and naming itself in NODE_NAME; this process is
    the cluster's driver, so an executor in it uses the cluster as it is. Without Ray the tests
    are skipped, naming the extra to install (failed under CI=true)."""
    if importlib.util.find_spec("ray") is None:
        missing("needs Ray: pip install 'wikiskill[ray]'")
    import ray
    from ray import cluster_utils

    saved = {name: os.environ.get(name) for name in ("RAY_AUTH_MODE", "WIKISKILL_CACHE_DIR")}
    os.environ["RAY_AUTH_MODE"] = "disabled"  # no token written into the home folder
    os.environ["WIKISKILL_CACHE_DIR"] = str(tmp_path_factory.mktemp("node-cache"))
    head = {
        "num_cpus": 1,
        "include_dashboard": False,
        "_system_config": FAST_HEALTH_CHECKS,
        "resources": {ONE_PER_NODE: 1},
        "env_vars": {NODE_NAME: "head"},
    }
    made = cluster_utils.Cluster(initialize_head=True, head_node_args=head)
    second = made.add_node(num_cpus=2, resources={"docker": 2, ONE_PER_NODE: 1}, env_vars={NODE_NAME: "second"})
    ray.init(address=made.address, log_to_driver=False)
    yield made, second
    ray.shutdown()
    made.shutdown()
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture()
def suite(tmp_path):
    suite = tmp_path / "suite"
    nonce = uuid.uuid4().hex
    for task_id, word in WORDS.items():
        write_harbor_task(suite, task_id, word, nonce=nonce)
    yield suite
    remove_images([tag_of(suite / "rev-ant")])


def workspace(tmp_path: Path, base_url: str, suite: Path, **settings) -> Path:
    ws = tmp_path / "ws"
    result = init_harbor(ws, suite, base_url)
    assert result.exit_code == 0, result.output
    config = yaml.safe_load((ws / "wikiskill.yaml").read_text())
    config.update({"harbor": {"ids": IDS}, "concurrency": 4, "ray": {"resources": {"docker": 1}}, **settings})
    (ws / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    return ws


ONE_PER_NODE = "one-per-node"
"""A resource each of the two nodes offers once: workers asking for it land one on each."""
NODE_NAME = "WIKISKILL_TEST_NODE"
"""Set in each node's raylet environment, so in its workers' and their checks' (`head`, `second`)."""


def actor_nodes() -> set[str]:
    """The nodes every wikiskill worker actor of this cluster ran on."""
    import ray

    actors = ray._private.state.actors().values()
    return {actor["Address"]["NodeID"] for actor in actors if actor["ActorClassName"] == "_Actor"}


def test_a_harbor_suite_runs_on_the_second_node_from_the_shipped_archive_and_scores_as_on_one(tmp_path, cluster, suite):
    made, second = cluster
    moved = tmp_path / "moved-away"

    def move_suite(first: int) -> None:
        if first == 1:
            suite.rename(moved)  # the command's path is gone before any verifier reads tests/

    world = ReversingWorld()
    with FakeOpenAIServer(world) as server:
        ws = workspace(tmp_path, server.base_url, suite)
        local = api.evaluate(api.open_workspace(ws), "val", options=RunOptions(executor="local"))
        tag = tag_of(suite / "rev-ant")
        built = image_id(tag)
        world.on_agent, world.firsts = move_suite, 0
        (ws / ".wikiskill" / "results").rename(tmp_path / "local-results")
        on_ray = api.evaluate(api.open_workspace(ws), "val", options=RunOptions(executor="ray", workers=2))
    moved.rename(suite)

    assert [t.score for t in local.runs[0]] == [1.0] * 4
    assert [(t.task_id, t.score, t.failure) for t in on_ray.runs[0]] == [
        (t.task_id, t.score, t.failure) for t in local.runs[0]
    ]
    assert actor_nodes() == {second.node_id}
    assert image_id(tag) == built  # the second node found the image of this digest: no second build
    unpacked = list((Path(os.environ["WIKISKILL_CACHE_DIR"]) / "wikiskill-suites").iterdir())
    assert len(unpacked) == 1 and sorted(p.name for p in unpacked[0].iterdir()) == sorted(WORDS)
    assert containers_of(ws) == []


def node_processes(node) -> list[psutil.Process]:
    raylet = psutil.Process(node.all_processes["raylet"][0].process.pid)
    return [raylet, *raylet.children(recursive=True)]


@pytest.mark.parametrize("spare", [True, False], ids=["a spare node takes its worker", "no room for its worker"])
def test_a_node_lost_mid_eval_loses_no_task_and_the_command_says_so_in_one_line(tmp_path, cluster, suite, spare):
    """Each worker asks for a node's whole `docker`, so one lands on the second node and one on the
    doomed one. The lost worker is made again on a spare node added just before the loss, which
    sweeps the containers the lost one left; with no spare, its tasks go to the worker left."""
    import ray

    made, second = cluster
    doomed = made.add_node(num_cpus=2, resources={"docker": 2})
    made.wait_for_nodes()
    until(lambda: ray.available_resources().get("docker", 0) >= 4, timeout=30)  # both nodes are seen
    added = []
    killed: list[int] = []
    left: list[str] = []

    def kill_doomed(first: int) -> None:
        if first == 3:  # both workers are running tasks
            if spare:  # a node of its own process: Ray's harness adds nodes from the main thread only
                added.append(start_node(made.address, {"docker": 2}))
            for process in node_processes(doomed):
                process.kill()
                killed.append(process.pid)
            left.extend(owned_by(killed))

    try:
        with FakeOpenAIServer(ReversingWorld(on_agent=kill_doomed, delay_s=1.0)) as server:
            ws = workspace(tmp_path, server.base_url, suite, ray={"resources": {"docker": 2}})
            run = eval_on(ws, made.address)
        terminal = run.stdout + run.stderr
        assert run.returncode == 0, terminal
        assert "mean score 1.000 (4/4 solved)" in terminal  # every task scored, none 0, none lost
        said = [line for line in terminal.splitlines() if "was lost" in line]
        assert len(said) == 1 and doomed.node_id[:12] in said[0], terminal
        assert ("worker left: no room for more" in said[0]) is not spare, said[0]
        assert not RAY_LINE.search(terminal) and "working directory" not in terminal, terminal
        assert "marked dead" in (ws / ".wikiskill" / "ray.log").read_text()
        assert left and (owned_by(killed) == []) is spare  # swept by the worker made after the loss
    finally:
        made.remove_node(doomed, allow_graceful=False)  # what is left of it, and the harness's count
        for node in added:
            stop_node(node)
        subprocess.run(["docker", "rm", "-f", *owned_by(killed)], capture_output=True)


def start_node(address: str, resources: dict[str, float]) -> subprocess.Popen:
    """`ray start --block` joining the cluster at `address`, once Ray counts its resources."""
    import ray

    before = ray.available_resources().get("docker", 0)
    node = subprocess.Popen(
        [sys.executable, "-m", "ray.scripts.scripts", "start", f"--address={address}", "--num-cpus=1", "--block"]
        + [f"--resources={json.dumps(resources)}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    until(lambda: ray.available_resources().get("docker", 0) > before, timeout=60)
    return node


def stop_node(node: subprocess.Popen) -> None:
    """End the node `start_node` started, with every process of it."""
    for process in [*psutil.Process(node.pid).children(recursive=True), psutil.Process(node.pid)]:
        process.kill()
    node.wait()


def eval_on(ws: Path, address: str) -> subprocess.CompletedProcess:
    """`wikiskill eval` through the CLI on the cluster at `address`, two workers."""
    return subprocess.run(
        [sys.executable, "-m", "wikiskill", "-C", str(ws), "eval", "--executor", "ray", "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "RAY_ADDRESS": address, "OPENAI_API_KEY": "sk-test"},
    )


def owned_by(pids: list[int]) -> list[str]:
    """The ids of wikiskill's containers whose owner is one of `pids`."""
    found = subprocess.run(
        ["docker", "ps", "-a", "--filter", "label=wikiskill.pid", "--format", '{{.ID}} {{.Label "wikiskill.pid"}}'],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [line.split() for line in found.stdout.splitlines()]
    return [row[0] for row in rows if len(row) == 2 and int(row[1]) in pids]


NODE_BOUND_CHECK = """#!/bin/sh
# task `moves`: its check cannot run on the node that tried it first; task `stuck`: on no node
# (127: command not found, an infrastructure failure)
task=$(basename "$WIKISKILL_TASK_DIR")
echo "$task $WIKISKILL_TEST_NODE $(date +%s.%N)" >> {log}
[ "$task" = stuck ] && exit 127
[ "$(grep -m 1 "^$task " {log} | cut -d ' ' -f 2)" = "$WIKISKILL_TEST_NODE" ] && exit 127
exit 0
"""


def test_a_task_whose_infrastructure_fails_on_its_node_is_retried_on_the_other_and_scored(tmp_path, cluster):
    log = tmp_path / "tries.log"
    suite = tmp_path / "suite"
    for split, ids in (("train", ["t"]), ("val", ["moves", "stuck"]), ("test", ["e"])):
        for task_id in ids:
            (suite / split / task_id).mkdir(parents=True)
            (suite / split / task_id / "task.md").write_text("Say done.")
    (suite / "suite.yaml").write_text(yaml.safe_dump({"scorer": "command", "command": "./check.sh"}))
    (suite / "check.sh").write_text(NODE_BOUND_CHECK.format(log=log))
    (suite / "check.sh").chmod(0o755)
    ws = api.init_workspace(tmp_path / "ws", benchmark=f"tasks:{suite}", agent="command", command=["echo", "{prompt}"])
    edit_config(ws, **{"ray.resources": {ONE_PER_NODE: 1}, "infra.retries": 2, "infra.backoff": 0.2})
    on_ray = api.evaluate(ws, "val", options=RunOptions(executor="ray", workers=2))
    in_place = api.evaluate(ws, "val", options=RunOptions(executor="local"))  # runs `stuck` again only

    tries = [line.split(" ") for line in log.read_text().splitlines()]  # no node name on this machine
    moves = [(node, float(at)) for task, node, at in tries if task == "moves"]
    assert sorted(node for node, _ in moves) == ["head", "second"]  # the retry ran on the other node
    (first, _), (other, _) = moves
    assert moves[1][1] - moves[0][1] >= 0.2  # after the backoff
    # `stuck` started beside `moves`, on the other worker; then the node not tried, then not the last
    assert [node for task, node, _ in tries if task == "stuck"] == [other, first, other, "", "", ""]
    by_id = {t.task_id: t for t in on_ray.runs[0]}
    assert (by_id["moves"].score, by_id["moves"].failure, by_id["moves"].retries) == (1.0, None, 1)
    [local] = [t for t in in_place.runs[0] if t.task_id == "stuck"]
    assert (by_id["stuck"].error, by_id["stuck"].retries) == (local.error, 2) and by_id["stuck"].infra
    assert local.error.startswith("infrastructure failure, 3 tries: ")
    assert retry_trailers(on_ray.runs) == {"retried": 2, "retries": 3, "infra_left": 1}
