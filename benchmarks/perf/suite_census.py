"""Where the test suite's time goes: the README's test command run once, its core-seconds against
the budget of 6 minutes on this machine's cores, split by who spent them and by kind of test.

    python benchmarks/perf/suite_census.py [PYTEST_ARGS ...]

It runs `python -m pytest -n auto` from the repository root (plus PYTEST_ARGS: a subset, `-m
'not slow'`, ...) with the environment as it is (set CI=true for CI's run) and reports:

- whether the time is CPU or waiting: the machine's busy core-seconds (/proc/stat) against what
  its cores could give in the run's wall time, and the share of seconds with a core left idle;
- who spent it: pytest and every process it started and waited for, down the tree (killed ones
  included), and the rest of the machine's busy time: the Docker and containerd daemons,
  processes left to init (Ray's nodes and workers, containers' processes), anything else running;
- the ratio the suite's budget is judged by: busy core-seconds over the cores x 360 s available;
- the worker-seconds (each test's time, set-up and tear-down included) by kind of test, decided
  by each test's marks and module: Ray, containers, coding-agent CLIs, kill -9 and resume, the
  rest; the slowest modules; and the tests that were running while cores sat idle (a test that
  waits leaves its core idle).

Only the machine's totals are read, so run it with nothing else running.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import NamedTuple

from _common import table
from census_plugin.wikiskill_census import TESTS_FILE

ROOT = Path(__file__).resolve().parents[2]
BUDGET_S = 360
PLUGIN = Path(__file__).resolve().parent / "census_plugin"


class CpuSampler:
    """The machine's busy and idle jiffies, read every second while a run lasts."""

    def __init__(self) -> None:
        self.samples: list[tuple[int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> CpuSampler:
        self.samples.append(read_cpu())
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(read_cpu())

    def _loop(self) -> None:
        while not self._stop.wait(1.0):
            self.samples.append(read_cpu())

    def idle_intervals(self) -> list[tuple[float, float, float]]:
        """(start, end, idle core-seconds) of each interval between samples."""
        ticks = os.sysconf("SC_CLK_TCK")
        return [(a[2], b[2], (b[1] - a[1]) / ticks) for a, b in zip(self.samples, self.samples[1:], strict=False)]

    def busy_seconds(self) -> float:
        return (self.samples[-1][0] - self.samples[0][0]) / os.sysconf("SC_CLK_TCK")

    def share_with_idle_core(self) -> float:
        """The share of 1-second intervals in which at least a tenth of a core sat idle."""
        intervals = self.idle_intervals()
        return sum(1 for start, end, idle in intervals if idle >= 0.1 * (end - start)) / max(1, len(intervals))


def read_cpu() -> tuple[int, int, float]:
    """(busy, idle) jiffies of all cores since boot, iowait counted as idle, and the time read."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields[:8]) - idle, idle, time.time()


class TestRun(NamedTuple):
    """One test as the plugin timed it in its worker."""

    kind: str
    began: float
    ended: float
    cpu: float

    @property
    def seconds(self) -> float:
        return self.ended - self.began


def read_tests(folder: Path) -> dict[str, TestRun]:
    """The plugin's lines, from its file per pytest process in `folder`, by node id."""
    tests = {}
    for path in folder.glob("tests.*"):
        for line in path.read_text(encoding="utf-8").splitlines():
            nodeid, kind, began, ended, cpu = line.split("\t")
            tests[nodeid] = TestRun(kind, float(began), float(ended), float(cpu))
    return tests


def main(argv: list[str]) -> int:
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="suite-census-") as scratch:
        env = {
            **os.environ,
            TESTS_FILE: str(Path(scratch) / "tests"),
            # only the plugin's folder: the tests' own processes (docker-compose is Python) would
            # import this folder's modules (compose.py, ...) in place of theirs
            "PYTHONPATH": os.pathsep.join(filter(None, [str(PLUGIN), os.environ.get("PYTHONPATH")])),
        }
        command = [sys.executable, "-m", "pytest", "-n", "auto", "-p", "wikiskill_census", *argv]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        with CpuSampler() as sampler:
            run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        summary = [line for line in run.stdout.splitlines() if line.strip()][-1:]
        tests = read_tests(Path(scratch))
    if not tests:
        print(run.stdout[-3000:], run.stderr[-3000:])
        return run.returncode or 1
    tree = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    busy = sampler.busy_seconds()
    failed = [line for line in run.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    if run.stderr.strip():
        print(run.stderr.strip()[-2000:])
    print("\n".join([*failed, f"pytest: {' '.join(summary)} (exit {run.returncode})"]))
    print(f"wall {wall:.0f} s on {cores} cores; budget {BUDGET_S} s\n")
    print(
        table(
            ["core-seconds", "s", "share of the cores"],
            [
                ["available (cores x wall)", cores * wall, 1.0],
                ["busy, the whole machine", busy, busy / (cores * wall)],
                ["  pytest and the processes it waited for", tree, tree / (cores * wall)],
                ["  the rest (daemons, orphans such as Ray's)", busy - tree, (busy - tree) / (cores * wall)],
                ["idle", cores * wall - busy, 1 - busy / (cores * wall)],
            ],
        )
    )
    print(f"\nseconds with a tenth of a core or more idle: {sampler.share_with_idle_core():.0%}")
    print(f"busy / cores: {busy / cores:.0f} s, the wall time if no core had ever been idle")
    print(f"busy core-seconds / budget (cores x {BUDGET_S} s): {busy / (cores * BUDGET_S):.2f}\n")
    by_kind: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    modules: Counter[str] = Counter()
    for nodeid, test in tests.items():
        by_kind[test.kind] += test.seconds
        counts[test.kind] += 1
        modules[nodeid.split("::")[0]] += test.seconds
    total = sum(by_kind.values())
    rows = [[kind, counts[kind], seconds, seconds / total] for kind, seconds in by_kind.most_common()]
    print(table(["kind of test", "tests", "worker-s", "share"], [*rows, ["all", len(tests), total, 1.0]]))
    print("\n" + table(["slowest modules", "worker-s"], [[name, s] for name, s in modules.most_common(10)]))
    idle = idle_by_test(sampler.idle_intervals(), tests)
    rows = [[key[-90:], tests[key].seconds, tests[key].cpu, seconds] for key, seconds in idle.most_common(15)]
    print("\n" + table(["tests running while cores sat idle", "wall s", "CPU s", "idle core-s"], rows))
    print("(idle core-seconds of each second, shared among the tests running then; CPU: the worker's own")
    print("and that of the processes it waited for, so daemons' and orphans' work is not in it)")
    return run.returncode


def idle_by_test(intervals: list[tuple[float, float, float]], tests: dict[str, TestRun]) -> Counter[str]:
    """Each interval's idle core-seconds shared among the tests running in it, by their overlap."""
    idle: Counter[str] = Counter()
    for start, end, seconds in intervals:
        overlaps = {nodeid: min(end, t.ended) - max(start, t.began) for nodeid, t in tests.items()}
        overlaps = {nodeid: overlap for nodeid, overlap in overlaps.items() if overlap > 0}
        total = sum(overlaps.values())
        for nodeid, overlap in overlaps.items():
            idle[nodeid] += seconds * overlap / total
    return idle


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
