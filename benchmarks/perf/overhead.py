"""Harness overhead: the share of a round's wall time during which no model call is in flight
(git commits, trace writing, rendering, sampling, loading), at 200 and 1,000 train tasks with a
scripted server of latency L = 0.05 s in its own process.

    python benchmarks/perf/overhead.py [--sizes 200 1000] [--latency 0.05] [--concurrency 4 16] [--repeats 1]

A QA workspace over a generated jsonl suite runs one `evolve` round in this process (baseline
first, timed apart). Every model call's interval is recorded; "in model calls" is the union of
those intervals, so concurrent calls count once and the rest of a step's wall time is overhead.

The figures move with the file system: the round's working-tree sync creates one file per train
task, and on the 2-core VM this was tuned on, creating a 3 KB file cost anywhere from 0.03 to
0.8 ms depending on what had just been written. Run it twice, or with --repeats N: each
configuration then runs N times in fresh workspaces and the table shows the run whose ROUND
overhead share is the median.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import MODEL, fake_server, qa_suite, table
from wikiskill import api
from wikiskill.llm.model import LiteLLMModel
from wikiskill.loop import evolve as evolve_module
from wikiskill.loop.steps.evaluation import Validate
from wikiskill.loop.steps.experience import Maintain, Rollout
from wikiskill.loop.steps.gate import Gate
from wikiskill.loop.steps.proposal import Propose

STEPS = {"rollout": Rollout, "maintain": Maintain, "propose": Propose, "validate": Validate, "gate": Gate}
"""The round's steps timed (the baseline is timed through `record_incumbent`)."""


class Recorder:
    """Intervals of model calls and of harness steps, from patched methods."""

    def __init__(self):
        self.calls: list[tuple[float, float]] = []
        self.steps: dict[str, tuple[float, float]] = {}

    def install(self) -> None:
        original_async, original_sync = LiteLLMModel.acomplete, LiteLLMModel.complete
        recorder = self

        async def acomplete(model, *args, **kwargs):
            started = time.perf_counter()
            try:
                return await original_async(model, *args, **kwargs)
            finally:
                recorder.calls.append((started, time.perf_counter()))

        def complete(model, *args, **kwargs):
            started = time.perf_counter()
            try:
                return original_sync(model, *args, **kwargs)
            finally:
                recorder.calls.append((started, time.perf_counter()))

        LiteLLMModel.acomplete, LiteLLMModel.complete = acomplete, complete
        for name, step in STEPS.items():
            step.run = self._timed(name, step.run)
        evolve_module.record_incumbent = self._timed("baseline", evolve_module.record_incumbent)

    def _timed(self, step: str, function: Callable) -> Callable:
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.steps[step] = (started, time.perf_counter())

        return timed

    def in_calls(self, start: float, end: float) -> float:
        """Seconds of [start, end] with at least one model call in flight."""
        busy, reached = 0.0, start
        for call_start, call_end in sorted(self.calls):
            call_start, call_end = max(call_start, reached), min(call_end, end)
            if call_end > call_start:
                busy += call_end - call_start
                reached = call_end
        return busy


def median_round(
    root: Path, url: str, train: int, concurrency: int, recorder: Recorder, repeats: int
) -> list[list[object]]:
    """The rows of the run with the median ROUND overhead share among `repeats` runs."""
    runs = [one_round(root / f"run-{n}", url, train, concurrency, recorder) for n in range(repeats)]
    return sorted(runs, key=_round_share)[repeats // 2]


def _round_share(rows: list[list[object]]) -> float:
    """A run's ROUND overhead share: overhead s / wall s."""
    row = next(row for row in rows if str(row[2]).startswith("ROUND"))
    return float(row[5]) / float(row[3])


def one_round(root: Path, url: str, train: int, concurrency: int, recorder: Recorder) -> list[list[object]]:
    suite = qa_suite(root / f"suite-{train}", {"train": train, "val": 50, "test": 5})
    ws = api.init_workspace(
        root / f"ws-{train}-{concurrency}",
        benchmark=f"jsonl:{suite}",
        model=MODEL,
        api_base=url,
        concurrency=concurrency,
    )
    recorder.calls.clear()
    recorder.steps.clear()
    started = time.perf_counter()
    api.evolve(ws, 1)
    ended = time.perf_counter()
    rows = []
    for step in ("baseline", *STEPS):
        start, end = recorder.steps[step]
        wall, model = end - start, recorder.in_calls(start, end)
        rows.append(_row(train, concurrency, step, wall, model))
    round_start = recorder.steps["rollout"][0]
    rows.append(
        _row(train, concurrency, "ROUND (rollout..tag)", ended - round_start, recorder.in_calls(round_start, ended))
    )
    rows.append(_row(train, concurrency, "whole evolve command", ended - started, recorder.in_calls(started, ended)))
    return rows


def _row(train: int, concurrency: int, what: str, wall: float, model: float) -> list[object]:
    return [train, concurrency, what, wall, model, wall - model, f"{(wall - model) / wall:.1%}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 16])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    os.environ.setdefault("GIT_AUTHOR_NAME", "perf")
    os.environ.setdefault("GIT_AUTHOR_EMAIL", "perf@localhost")
    recorder = Recorder()
    recorder.install()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    rows = []
    with tempfile.TemporaryDirectory() as tmp, fake_server(args.latency, handler="_world:handler") as url:
        for size in args.sizes:
            for concurrency in args.concurrency:
                rows += median_round(Path(tmp), url, size, concurrency, recorder, args.repeats)
                print(f"{size} train tasks at concurrency {concurrency} done", flush=True)
    print()
    print(table(["train", "C", "step", "wall s", "in model calls s", "overhead s", "overhead share"], rows))
    print(f"\nL = {args.latency} s, val 50 tasks; floor: ROUND overhead <= 5%")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
