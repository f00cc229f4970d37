"""A compose task's per-task overhead against a single container's, side by side in one run: the
same task (its oracle writes a word, its verifier checks it), once with environment/Dockerfile
alone and once with a docker-compose.yaml that adds one idle sidecar on the same image. Each is
played `--repeats` times by the oracle, start to removal, alternating, after one warm-up each.

    python benchmarks/perf/compose.py [--repeats 5]

The image is FROM wikiskill/base:bookworm, built once and removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from _common import table
from wikiskill.benchmarks.harbor import HarborSuite
from wikiskill.core.config import EnvironmentSettings
from wikiskill.roles.reference_agent import OracleAgent
from wikiskill.run.harbor_tasks import HarborTaskAgent, open_setup

TOML = 'version = "1.0"\n[environment]\nallow_internet = false\n'
COMPOSE = """services:
  main:
    image: ${MAIN_IMAGE_NAME}
  sidecar:
    image: ${MAIN_IMAGE_NAME}
    command: ["sh", "-c", "sleep infinity"]
"""


def write_task(root: Path, name: str, dockerfile: str, compose: bool) -> None:
    folder = root / name
    for part in ("environment", "tests", "solution"):
        (folder / part).mkdir(parents=True)
    (folder / "task.toml").write_text(TOML)
    (folder / "instruction.md").write_text("Write ok into /app/answer.txt.\n")
    (folder / "environment" / "Dockerfile").write_text(dockerfile)
    if compose:
        (folder / "environment" / "docker-compose.yaml").write_text(COMPOSE)
    (folder / "solution" / "solve.sh").write_text("printf ok > /app/answer.txt\n")
    (folder / "tests" / "test.sh").write_text(
        'mkdir -p /logs/verifier; [ "$(cat /app/answer.txt)" = ok ] && echo 1 > /logs/verifier/reward.txt'
        " || echo 0 > /logs/verifier/reward.txt\n"
    )


async def timed(agent: HarborTaskAgent, suite: HarborSuite, task_id: str) -> float:
    began = time.perf_counter()
    trajectory = await agent.run(suite.as_task(suite.by_id[task_id], "train"))
    assert trajectory.score == 1.0, trajectory.error
    return time.perf_counter() - began


async def measure(repeats: int, root: Path) -> dict[str, list[float]]:
    dockerfile = f"# {uuid.uuid4().hex}\nFROM wikiskill/base:bookworm\nWORKDIR /app\n"
    write_task(root, "single", dockerfile, compose=False)
    write_task(root, "compose", dockerfile, compose=True)
    suite = HarborSuite(root)
    setup = open_setup(EnvironmentSettings(), root / "cache", workspace=root)
    agent = HarborTaskAgent(OracleAgent(), suite, setup)
    try:
        for name in ("single", "compose"):
            await timed(agent, suite, name)
        times: dict[str, list[float]] = {"single": [], "compose": []}
        for _ in range(repeats):
            for name in times:
                times[name].append(await timed(agent, suite, name))
        return times
    finally:
        if setup.images.built:
            setup.runtime.call("rmi", "-f", *setup.images.built)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wikiskill-perf-compose-") as scratch:
        times = asyncio.run(measure(arguments.repeats, Path(scratch) / "suite"))
    single, compose = (statistics.median(times[name]) for name in ("single", "compose"))
    rows = [
        ["single container", f"{single:.2f} s", f"{min(times['single']):.2f}-{max(times['single']):.2f} s"],
        ["compose, one sidecar", f"{compose:.2f} s", f"{min(times['compose']):.2f}-{max(times['compose']):.2f} s"],
    ]
    print(table(["task (oracle, start to removal)", "median", "range"], rows))
    print(f"compose overhead: +{compose - single:.2f} s per task ({compose / single:.2f}x)")


if __name__ == "__main__":
    sys.exit(main())
