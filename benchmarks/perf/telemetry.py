"""What OpenTelemetry traces cost: the same scripted `evolve` round with telemetry off and on,
side by side in one run. On, every span goes through the OTLP/HTTP exporter to a local receiver
in its own process that drops what it receives (`python -m wikiskill.testing.otlp`), so the
figure is wikiskill's spans, the SDK's batching and the export requests, not a backend's speed.

    python benchmarks/perf/telemetry.py [--train 200] [--latency 0.05] [--concurrency 4] [--repeats 3]

Each repeat runs off then on, each in a fresh workspace over the same generated jsonl suite
(`--train` train tasks, 50 val), against the scripted server of `_world.py` in its own process:
`evolve --rounds 1`, the baseline included. Off, the run also checks that nothing of
OpenTelemetry was imported. The table gives each run's wall time, and the median and fastest of
the wall and CPU seconds (this process, every thread) with their ratios: on a busy machine the
wall time moves with the load, the CPU seconds much less.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from _common import MODEL, fake_server, qa_suite, table
from wikiskill import api
from wikiskill.core.config import Role, TelemetrySettings
from wikiskill.llm.backend import import_litellm
from wikiskill.telemetry.spans import command, model_call_span, task_span, tasks_span


@contextmanager
def dropping_receiver() -> Iterator[str]:
    """`python -m wikiskill.testing.otlp` on a free port; yields its URL."""
    receiver = subprocess.Popen([sys.executable, "-m", "wikiskill.testing.otlp"], stdout=subprocess.PIPE, text=True)
    try:
        line = receiver.stdout.readline()  # "OTLP receiver at http://127.0.0.1:PORT (dropping spans)"
        if not line:
            raise RuntimeError("the OTLP receiver did not start")
        yield line.split()[3]
    finally:
        receiver.terminate()
        receiver.wait(timeout=10)


def opentelemetry_loaded() -> bool:
    return any(name == "opentelemetry" or name.startswith("opentelemetry.") for name in sys.modules)


def one_run(root: Path, suite: Path, url: str, concurrency: int, endpoint: str | None) -> tuple[float, float]:
    """Wall seconds and this process's CPU seconds (every thread's, the exporter's included) of one evolve."""
    ws = api.init_workspace(root, benchmark=f"jsonl:{suite}", model=MODEL, api_base=url, concurrency=concurrency)
    if endpoint:
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    else:
        os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    started, cpu = time.perf_counter(), time.process_time()
    api.evolve(ws, 1)
    return time.perf_counter() - started, time.process_time() - cpu


def span_cost(endpoint: str, tasks: int = 300) -> float:
    """CPU seconds per span of a traced command of `tasks` tasks with one model call each, its
    opening, closing and export included."""
    settings = TelemetrySettings(otlp=endpoint)
    cpu = time.process_time()
    with command("bench", settings), tasks_span("train", "main", tasks):
        for index in range(tasks):
            with task_span(f"train-{index:05d}") as task:
                with model_call_span(Role.AGENT, MODEL, {"temperature": 0.0}) as call:
                    call.set({"gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 12})
                task.set({"wikiskill.score": 1.0})
    return (time.process_time() - cpu) / (2 * tasks + 2)


def summary(values: list[float]) -> list[str]:
    return [f"{statistics.median(values):.2f}", f"{min(values):.2f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("GIT_AUTHOR_NAME", "perf")
    os.environ.setdefault("GIT_AUTHOR_EMAIL", "perf@localhost")
    for name in [name for name in os.environ if name.startswith("OTEL_")]:
        del os.environ[name]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    import_litellm()  # its import (seconds) would count against the first run
    times: dict[str, list[tuple[float, float]]] = {"off": [], "on": []}
    with (
        tempfile.TemporaryDirectory() as tmp,
        fake_server(args.latency, handler="_world:handler") as url,
        dropping_receiver() as endpoint,
    ):
        root = Path(tmp)
        suite = qa_suite(root / "suite", {"train": args.train, "val": 50, "test": 5})
        one_run(root / "warm-up-off", suite, url, args.concurrency, None)  # first-use imports, untimed
        imported_off = opentelemetry_loaded()
        one_run(root / "warm-up-on", suite, url, args.concurrency, endpoint)
        for repeat in range(args.repeats):
            for mode in ("off", "on"):
                where = endpoint if mode == "on" else None
                times[mode].append(one_run(root / f"{mode}-{repeat}", suite, url, args.concurrency, where))
            print(f"repeat {repeat + 1} of {args.repeats} done", flush=True)
        per_span = statistics.median(span_cost(endpoint) for _ in range(5))
    walls = {mode: [wall for wall, _ in runs] for mode, runs in times.items()}
    cpus = {mode: [cpu for _, cpu in runs] for mode, runs in times.items()}
    rows = [
        [mode, *(f"{wall:.2f}" for wall in walls[mode]), *summary(walls[mode]), *summary(cpus[mode])] for mode in times
    ]
    print()
    runs = [f"run {n + 1} s" for n in range(args.repeats)]
    print(table(["telemetry", *runs, "median s", "fastest s", "CPU median s", "CPU least s"], rows))
    print()
    for what, figures in (("wall", walls), ("CPU", cpus)):
        for name, pick in (("medians", statistics.median), ("fastest", min)):
            ratio = pick(figures["on"]) / pick(figures["off"])
            print(f"{what} on / off ({name}): {ratio:.3f} ({ratio - 1:+.1%})")
    print(f"CPU per span (a task and its model call, export included): {per_span * 1e6:.0f} us")
    print(f"off imported OpenTelemetry: {imported_off}")
    print(
        f"train {args.train}, val 50, L = {args.latency} s, concurrency {args.concurrency}; "
        f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )


if __name__ == "__main__":
    main()
