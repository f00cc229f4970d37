"""A Harbor task's container overhead against the task's time: per step (create, start, copy the
tests in, exec one command, copy the logs out, remove), then whole tasks played by the built-in
agent in their containers, one at a time and `--parallel` at once.

    python benchmarks/perf/containers.py [--tasks 6] [--parallel 3] [--runtime docker|podman]
        [--api-base URL --model openai/NAME]

The task reverses a word into /app/answer.txt, its image FROM wikiskill/base:bookworm. By
default the agent is scripted by the fake server (two commands and `finish`), which answers at
once, so the task time is nearly all container work: the worst case for the overhead's share.
With `--api-base` a real model on an OpenAI-compatible server plays instead (a local one, e.g.
llama.cpp's llama-server with a small model; set OPENAI_API_KEY if it wants one); its score is
reported, not required. The image is built first (its time printed) and removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _common import table
from wikiskill.benchmarks.harbor import HarborSuite
from wikiskill.core.config import ContainerRuntime, EnvironmentSettings, LLMSettings, RoleSettings, SkillsSettings
from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.roles.shell_agent import ShellAgent
from wikiskill.run.harbor_tasks import HarborTaskAgent, open_setup
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

TOML = (
    '[metadata]\ncategory = "perf"\n[agent]\ntimeout_sec = 300.0\n[verifier]\ntimeout_sec = 60.0\n'
    "[environment]\ncpus = 1\nmemory_mb = 512\n"
)
TEST = (
    '#!/bin/bash\nif [ "$(cat /app/answer.txt)" = "{answer}" ]; then echo 1; else echo 0; fi '
    "> /logs/verifier/reward.txt\n"
)


def write_suite(root: Path, tasks: int) -> Path:
    for index in range(tasks):
        folder = root / f"reverse-{index:02d}"
        for part in ("environment", "tests"):
            (folder / part).mkdir(parents=True)
        word = f"word{index:02d}"
        (folder / "task.toml").write_text(TOML)
        (folder / "instruction.md").write_text(f"Write the word '{word}' backwards into /app/answer.txt.\n")
        (folder / "environment" / "Dockerfile").write_text("FROM wikiskill/base:bookworm\nWORKDIR /app\n")
        (folder / "tests" / "test.sh").write_text(TEST.format(answer=word[::-1]))
    return root


def agent_script(body: dict) -> Reply:
    word = re.search(r"Write the word '(\w+)'", body["messages"][1]["content"]).group(1)
    steps = ["ls -la", f"printf %s {word[::-1]} > answer.txt"]
    done = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if done < len(steps):
        return Reply(tool_calls=[{"name": "bash", "arguments": {"command": steps[done]}}])
    return Reply(tool_calls=[{"name": "finish", "arguments": {"answer": "done"}}])


def step_times(runtime: str, image: str, tests: Path, repeats: int) -> dict[str, float]:
    """The median seconds of each container step, by the CLI, `repeats` times."""
    times: dict[str, list[float]] = {}

    def timed(name: str, *argv: str) -> str:
        began = time.perf_counter()
        done = subprocess.run([runtime, *argv], capture_output=True, text=True, check=True)
        times.setdefault(name, []).append(time.perf_counter() - began)
        return done.stdout.strip()

    with tempfile.TemporaryDirectory() as scratch:
        for index in range(repeats):
            container = timed(
                "create",
                "create",
                "--network",
                "none",
                "--label",
                "wikiskill.perf=1",
                "--entrypoint",
                "sleep",
                image,
                "infinity",
            )
            timed("start", "start", container)
            timed("copy in", "cp", f"{tests}/.", f"{container}:/tmp")
            timed("exec", "exec", container, "true")
            timed("copy out", "cp", f"{container}:/etc/hostname", f"{scratch}/out-{index}")
            timed("remove", "rm", "-f", container)
    return {name: statistics.median(values) for name, values in times.items()}


@dataclass
class Played:
    walls: list[float]
    """Each task's seconds, container start to removal."""
    wall: float
    """All the tasks' seconds together."""
    scores: list[float]
    turns: int
    """The model's replies, each but the last one command (one `exec`)."""


async def play(suite: HarborSuite, setup, role: RoleSettings, parallel: int, scripted: bool) -> Played:
    model = LiteLLMModel(role, LLMSettings(retries=0), "agent", Meter())
    agent = HarborTaskAgent(ShellAgent(model, [], SkillsSettings(), 10), suite, setup)
    tasks = [suite.as_task(task, "train") for task in suite.by_id.values()]
    gate = asyncio.Semaphore(parallel)
    played = Played([], 0.0, [], 0)

    async def one(task) -> None:
        async with gate:
            began = time.perf_counter()
            trajectory = await agent.run(task)
            played.walls.append(time.perf_counter() - began)
            played.scores.append(trajectory.score)
            played.turns += sum(1 for message in trajectory.messages if message["role"] == "assistant")
            assert trajectory.score == 1.0 or not scripted, trajectory

    began = time.perf_counter()
    await asyncio.gather(*(one(task) for task in tasks))
    played.wall = time.perf_counter() - began
    return played


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--parallel", type=int, default=3)
    parser.add_argument("--runtime", choices=[kind.value for kind in ContainerRuntime], default="docker")
    parser.add_argument("--api-base", help="an OpenAI-compatible server whose model plays (default: the fake one)")
    parser.add_argument("--model", default="openai/fake", help="the litellm model string on --api-base")
    options = parser.parse_args()
    scripted = options.api_base is None
    with tempfile.TemporaryDirectory() as scratch:
        suite = HarborSuite(write_suite(Path(scratch) / "suite", options.tasks))
        setup = open_setup(
            EnvironmentSettings(runtime=ContainerRuntime(options.runtime)),
            Path(scratch) / "state",
            workspace=Path(scratch),
        )
        first = next(iter(suite.by_id.values()))
        began = time.perf_counter()
        image = asyncio.run(setup.image(first))
        print(
            f"image {image}: ready in {time.perf_counter() - began:.2f} s "
            f"({'built' if setup.images.built else 'found cached'})"
        )
        try:
            steps = step_times(options.runtime, image, first.tests, repeats=5)
            overhead = sum(steps.values())
            with FakeOpenAIServer(agent_script) if scripted else contextlib.nullcontext() as server:
                role = RoleSettings(model=options.model, api_base=server.base_url if scripted else options.api_base)
                os.environ.setdefault("OPENAI_API_KEY", "unused")
                serial = asyncio.run(play(suite, setup, role, 1, scripted))
                parallel = asyncio.run(play(suite, setup, role, options.parallel, scripted))
        finally:
            subprocess.run([options.runtime, "rmi", "-f", image], capture_output=True)
    task = statistics.median(serial.walls)
    player = "fake server" if scripted else options.model
    print(
        table(
            ["step", "median ms"],
            [[name, 1000 * value] for name, value in steps.items()] + [["all steps", 1000 * overhead]],
        )
    )
    print(
        f"median task ({player}, one at a time): {task:.2f} s (slowest {max(serial.walls):.2f} s); the container "
        f"steps: {100 * overhead / task:.0f}% of the median; {serial.turns} model replies in all; "
        f"scores {serial.scores}"
    )
    print(
        f"{options.tasks} tasks: one at a time {serial.wall:.2f} s, {options.parallel} at once "
        f"{parallel.wall:.2f} s ({serial.wall / parallel.wall:.2f}x); scores at once {parallel.scores}"
    )


if __name__ == "__main__":
    sys.exit(main())
