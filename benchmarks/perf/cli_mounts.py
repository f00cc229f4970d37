"""What running a coding-agent CLI inside a Harbor task's container costs per task: a container
with the host's install mounted read-only (the `node` binary and the global npm folder) against
one with no mounts, then whole Qwen Code tasks (the fake server answering at once) played on
this machine (`CliAgent`) and inside a container (`ContainerCliAgent`, the container's start and
removal included).

    python benchmarks/perf/cli_mounts.py [--repeats 10] [--cli-runs 2]

Installing the CLI into the image instead is not measured: the containers here have no internet
to install from. The CLI is found on PATH (`qwen`); the image is wikiskill/base:bookworm.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from _common import table
from wikiskill.benchmarks import Task
from wikiskill.benchmarks.task_folders import TASKS
from wikiskill.core.config import AgentSettings, ContainerRuntime, RoleSettings
from wikiskill.environments.container import Container, Limits
from wikiskill.environments.runtime import open_runtime
from wikiskill.roles.coding_agents.cli_agent import CliAgent
from wikiskill.roles.coding_agents.host_install import host_install
from wikiskill.roles.coding_agents.in_container import ContainerCliAgent
from wikiskill.roles.coding_agents.qwen_code import QwenCode
from wikiskill.testing.fakeserver import FakeOpenAIServer

IMAGE = "wikiskill/base:bookworm"
LABEL = "wikiskill.perf=cli-mounts"
TASK = Task(id="perf", split="train", question="Say done.")


class Suite:
    spec = TASKS


def start_and_remove(mounts: list[str], repeats: int) -> float:
    """The median seconds of `run -d`, `exec true` and `rm -f`, with the mount arguments."""
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        container = subprocess.run(
            [
                "docker",
                "run",
                "-d",
                "--network",
                "none",
                "--label",
                LABEL,
                *mounts,
                "--entrypoint",
                "sleep",
                IMAGE,
                "infinity",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        subprocess.run(["docker", "exec", container, "true"], check=True)
        subprocess.run(["docker", "rm", "-f", container], capture_output=True, check=True)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


async def cli_runs(url: str, runs: int) -> tuple[float, float]:
    """The median seconds of one Qwen Code task on this machine, and inside a fresh container."""
    settings, model = AgentSettings(runner="qwen-code"), RoleSettings(model="openai/fake", api_base=url)
    host, inside = (
        CliAgent(QwenCode(), Suite(), [], settings, model),
        ContainerCliAgent(QwenCode(), Suite(), [], settings, model),
    )
    runtime = open_runtime(ContainerRuntime.DOCKER)
    host_times, container_times = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as workdir:
            began = time.perf_counter()
            assert (await host.play(TASK, Path(workdir))).error is None
            host_times.append(time.perf_counter() - began)
        began = time.perf_counter()
        container = await Container.start(
            runtime, IMAGE, "/app", Limits(network="host", mounts=inside.mounts()), Path(tempfile.gettempdir())
        )
        try:
            assert (await inside.play_in(TASK, container)).error is None
        finally:
            await container.close()
        container_times.append(time.perf_counter() - began)
    return statistics.median(host_times), statistics.median(container_times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--cli-runs", type=int, default=2)
    options = parser.parse_args()
    mounts = [argument for mount in host_install(QwenCode()).mounts() for argument in mount.argv()]
    bare = start_and_remove([], options.repeats)
    mounted = start_and_remove(mounts, options.repeats)
    rows = [
        ["container run, exec, rm: no mounts", f"{bare:.3f}"],
        ["container run, exec, rm: node and npm folder mounted", f"{mounted:.3f}"],
        ["the mounts' cost", f"{mounted - bare:+.3f}"],
    ]
    if options.cli_runs:
        with FakeOpenAIServer(lambda body: "done") as server:
            on_host, in_container = asyncio.run(cli_runs(server.base_url, options.cli_runs))
        rows += [
            ["Qwen Code task on this machine", f"{on_host:.2f}"],
            ["Qwen Code task in a container (with its start and removal)", f"{in_container:.2f}"],
        ]
    print(table(["per task", "median s"], rows))


if __name__ == "__main__":
    main()
