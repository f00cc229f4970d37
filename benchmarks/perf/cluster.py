"""A Harbor suite under `--executor ray` on one Ray node and on two, in one run, and what each task
costs the command that drives them: its CPU seconds and memory, the bytes it ships, and its git
writes per step.

    python benchmarks/perf/cluster.py [--tasks 8] [--latency 1.0] [--workers 2]

Ray's own multi-node harness starts a head with no `docker` resource and a node with it; the
C = `--tasks` val tasks run at once (concurrency C) on that node, then again with a second node
added (the workers spread over both). Both nodes share this machine's cores and Docker daemon:
the ratio shows what the second node's scheduling and shipping cost or save here, not what a
second machine would add. The fake model answers each call after `--latency` seconds, so a task
lasts a few seconds, as a real model's would. Needs Docker, Ray and `wikiskill base-image`.
"""

from __future__ import annotations

import argparse
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import ray
import yaml
from ray.cluster_utils import Cluster

from _common import table
from containers import agent_script, write_suite
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.run.executors.recipe import Assignment
from wikiskill.run.executors.shipping import pack
from wikiskill.testing.fakeserver import FakeOpenAIServer


class SlowScript:
    """The containers benchmark's scripted agent, each answer after `latency` seconds."""

    def __init__(self, latency: float):
        self.latency = latency

    def __call__(self, body: dict):
        time.sleep(self.latency)
        return agent_script(body)


def commits(ws: Path) -> int:
    done = subprocess.run(["git", "rev-list", "--all", "--count"], cwd=ws, capture_output=True, text=True, check=True)
    return int(done.stdout)


def run_once(ws: Path, tasks: int, workers: int) -> dict[str, float]:
    """One eval of the val split on the cluster as it is; the driver's costs per task."""
    shutil.rmtree(ws / ".wikiskill" / "results", ignore_errors=True)
    me = psutil.Process()
    cpu, rss, git = sum(me.cpu_times()[:2]), me.memory_info().rss, commits(ws)
    start = time.perf_counter()
    evaluated = api.evaluate(api.open_workspace(ws), "val", options=RunOptions(executor="ray", workers=workers))
    wall = time.perf_counter() - start
    trajectories = evaluated.runs[0]
    assert len(trajectories) == tasks and all(t.score == 1.0 for t in trajectories), trajectories[0].error
    return {
        "wall": wall,
        "cpu": (sum(me.cpu_times()[:2]) - cpu) / tasks,
        "rss": (me.memory_info().rss - rss) / tasks,
        "git": commits(ws) - git,
        "returned": sum(len(pickle.dumps(t)) for t in trajectories) / tasks,
        "assignment": len(pickle.dumps(Assignment("0" * 32, "val", trajectories[0].task_id))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    scratch = Path(tempfile.mkdtemp(prefix="wikiskill-cluster-"))
    os.environ["WIKISKILL_CACHE_DIR"] = str(scratch / "cache")
    suite = write_suite(scratch / "suite", args.tasks)
    for toml in suite.glob("*/task.toml"):  # no network: this machine's engine may have no bridge
        toml.write_text(toml.read_text().replace("[environment]\n", "[environment]\nallow_internet = false\n"))
    ids = sorted(path.name for path in suite.iterdir())
    archive = pack("harbor", suite)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=2, resources={"docker": args.workers})
        ray.init(address=cluster.address, log_to_driver=False)
        with FakeOpenAIServer(SlowScript(args.latency)) as server:
            ws = api.init_workspace(scratch / "ws", f"harbor:{suite}", "openai/fake-model", server.base_url).root
            config = yaml.safe_load((ws / "wikiskill.yaml").read_text())
            config.update(
                {
                    "harbor": {"ids": {"train": ids[:1], "val": ids}},
                    "concurrency": args.tasks,
                    "ray": {"resources": {"docker": 1}},
                }
            )
            (ws / "wikiskill.yaml").write_text(yaml.safe_dump(config))
            run_once(ws, args.tasks, args.workers)  # builds the image once, warms Ray's workers
            one = run_once(ws, args.tasks, args.workers)
            cluster.add_node(num_cpus=2, resources={"docker": args.workers})
            cluster.wait_for_nodes()
            two = run_once(ws, args.tasks, args.workers)
    finally:
        ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{args.tasks} tasks at once, {args.workers} workers, model latency {args.latency:g} s per call")
    print(f"suite archive: {len(archive.data):,} bytes, put in the object store once per command")
    rows = [
        [
            label,
            f"{run['wall']:.1f}",
            f"{run['cpu'] * 1000:.0f}",
            f"{run['rss'] / 1024:.0f}",
            f"{run['assignment']:.0f}",
            f"{run['returned']:,.0f}",
            f"{run['git']:.0f}",
        ]
        for label, run in (("one node", one), ("two nodes", two))
    ]
    headers = ["cluster", "wall s", "driver CPU ms/task", "driver RSS KiB/task", "sent B/task", "returned B/task"]
    print(table([*headers, "git commits"], rows))
    print(f"two nodes / one node, wall time: {two['wall'] / one['wall']:.2f}")


if __name__ == "__main__":
    sys.exit(main())
