"""A CLI task agent's per-task wall time, and the share of it spent on isolation: making the task's
folder (workdir, private HOME, TMPDIR, the skills copied in, the CLI's settings written) and
removing it afterwards, plus, under `--sandbox bwrap`, starting bubblewrap.

    python benchmarks/perf/cli_agent.py [--tasks 8] [--url URL --model openai/NAME] [--sandbox none|bwrap]
        [--preset qwen-code] [--skills 3]

Without `--url` the model is the fake server in its own process, answering every request at once
(so the task time is nearly all the CLI's own start-up and bookkeeping: the worst case for the
overhead's share). With `--url` it is any OpenAI-compatible server, e.g. a local llama.cpp server.
Tasks run one at a time, so each time is the task's own. The CLI is found on PATH (`qwen` for
Qwen Code).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from _common import fake_server, qa_suite, table
from wikiskill.benchmarks.registry import load_benchmark
from wikiskill.core.config import Config, Role
from wikiskill.knowledge.skills import parse_skill
from wikiskill.roles.coding_agents import cli_agent as agent_module
from wikiskill.roles.coding_agents.cli_agent import CliAgent
from wikiskill.roles.coding_agents.presets import make_preset

SKILL = (
    "---\nname: {name}\ndescription: Count letters one by one ({name}).\n---\n\n"
    "## Instructions\n1. Write the word with one letter per line.\n2. Count the lines holding the letter.\n"
)


class Timer:
    """Wraps the agent's `task_folder` to time making and removing each task's folder."""

    def __init__(self):
        self.setup: list[float] = []
        self.teardown: list[float] = []
        self.original = agent_module.task_folder

    def install(self) -> None:
        timer = self

        @contextmanager
        def timed(*args, **kwargs):
            started = time.perf_counter()
            manager = timer.original(*args, **kwargs)
            folder = manager.__enter__()
            timer.setup.append(time.perf_counter() - started)
            try:
                yield folder
            finally:
                started = time.perf_counter()
                manager.__exit__(None, None, None)
                timer.teardown.append(time.perf_counter() - started)

        agent_module.task_folder = timed


def bwrap_start() -> float:
    """The median extra seconds of starting `true` under bubblewrap, as the agent wraps a CLI."""

    def median(argv: list[str]) -> float:
        times = []
        for _ in range(5):
            started = time.perf_counter()
            subprocess.run(argv, check=True)
            times.append(time.perf_counter() - started)
        return statistics.median(times)

    true = shutil.which("true")
    wrapped = [
        shutil.which("bwrap"),
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--unshare-pid",
        "--unshare-ipc",
        "--die-with-parent",
        "--",
        true,
    ]
    return max(median(wrapped) - median([true]), 0.0)


def run(url: str, model: str, args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="wikiskill-cli-bench-") as scratch:
        suite = qa_suite(Path(scratch) / "suite", {"train": 1, "val": args.tasks, "test": 1})
        config = Config.model_validate(
            {
                "benchmark": f"jsonl:{suite}",
                "model": model,
                "api_base": url,
                "agent": {"runner": args.preset, "sandbox": args.sandbox, "timeout_s": args.timeout},
            }
        )
        benchmark = load_benchmark(config)
        skills = [parse_skill(SKILL.format(name=f"skill-{index}")) for index in range(args.skills)]
        agent = CliAgent(make_preset(config.agent), benchmark, skills, config.agent, config.role(Role.AGENT))
        timer = Timer()
        timer.install()
        rows, walls = [], []
        for task in benchmark.tasks("val"):
            started = time.perf_counter()
            trajectory = asyncio.run(agent.run(task))
            wall = time.perf_counter() - started
            setup, teardown = timer.setup[-1], timer.teardown[-1]
            walls.append(wall)
            rows.append(
                [
                    task.id,
                    wall,
                    setup * 1000,
                    teardown * 1000,
                    100 * (setup + teardown) / wall,
                    trajectory.score,
                    trajectory.error or "",
                ]
            )
    print(table(["task", "wall s", "set-up ms", "tear-down ms", "overhead %", "score", "error"], rows))
    overhead = sum(timer.setup) + sum(timer.teardown)
    print(
        f"\nmedian task {statistics.median(walls):.2f} s; isolation (folder set-up + tear-down) "
        f"{1000 * overhead / len(walls):.1f} ms a task = {100 * overhead / sum(walls):.2f}% of task time"
    )
    if args.sandbox == "bwrap":
        start = bwrap_start()
        print(
            f"bubblewrap start: {1000 * start:.1f} ms a task = {100 * start * len(walls) / sum(walls):.2f}% "
            "(inside the task's wall time above)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--url", help="an OpenAI-compatible server's base URL (default: the fake server)")
    parser.add_argument("--model", default="openai/fake-model")
    parser.add_argument("--preset", default="qwen-code")
    parser.add_argument("--sandbox", choices=["none", "bwrap"], default="none")
    parser.add_argument("--skills", type=int, default=3, help="skills copied into each task's folder")
    parser.add_argument("--timeout", type=float, default=600.0, help="agent.timeout_s")
    args = parser.parse_args()
    if args.url:
        run(args.url, args.model, args)
        return
    with fake_server(0.0) as url:
        run(url, args.model, args)


if __name__ == "__main__":
    sys.exit(main())
