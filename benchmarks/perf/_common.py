"""Shared by the speed benchmarks in this folder: a fake OpenAI server in its own process (so its
CPU never counts as the client's), QA suites generated on the fly, and plain-text tables."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODEL = "openai/gpt-4o-mini"  # priced by litellm's bundled cost map; the fake server answers any name
ANSWER = "Counting the letters. <answer>3</answer>"

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


@contextmanager
def fake_server(latency: float, content: str = ANSWER, handler: str | None = None) -> Iterator[str]:
    """`python -m wikiskill.testing.fakeserver` on a free port; yields its base URL."""
    command = [
        sys.executable,
        "-m",
        "wikiskill.testing.fakeserver",
        "--port",
        "0",
        "--latency",
        str(latency),
        "--content",
        content,
        "--completion-tokens",
        "12",
    ]
    if handler:
        command += ["--handler", handler]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))}
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = server.stdout.readline()  # "fake OpenAI server at http://127.0.0.1:PORT/v1 (latency ...)"
        if not line:
            raise RuntimeError("the fake server did not start")
        yield line.split()[4]
    finally:
        server.terminate()
        server.wait(timeout=10)


def qa_suite(directory: Path, sizes: dict[str, int]) -> Path:
    """A jsonl:DIR suite of letter-counting questions whose answer is always 3."""
    directory.mkdir(parents=True, exist_ok=True)
    for split, count in sizes.items():
        lines = [
            json.dumps(
                {
                    "id": f"{split}-{i:05d}",
                    "answer": "3",
                    "question": f"How many letters 'e' are in 'e{'x' * (i % 7)}ee' (#{i})?",
                }
            )
            for i in range(count)
        ]
        (directory / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return directory


def median_time(run: Callable[[], object], repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def table(headers: list[str], rows: list[list[object]]) -> str:
    cells = [headers] + [[_text(value) for value in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)) for row in cells]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def _text(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
    return str(value)
