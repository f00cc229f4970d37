"""Rollout throughput: QA agent tasks/s through each executor (`local`, `processes`, `ray`)
against a fake OpenAI server with latency L (in its own process), side by side with the ideal
C/L and a bare litellm asyncio loop making the same calls in one process and in `--workers`
processes, at each concurrency C; each executor's start-up cost; and litellm's own CPU cost per
call, which caps one event loop at about 1/cpu_per_call calls/s.

    python benchmarks/perf/throughput.py [--latency 0.2] [--concurrency 8 32 64] [--workers 2]

Each task is one model call; each C runs max(40, --waves x C) tasks. An executor is opened once
and serves every run, as it serves every step of a command; its start-up (workers, a local Ray,
their first calls) is measured apart: a cold run of one task per worker less a warm one. Every
variant runs on the same warm server; each figure is the best of --repeats runs (the machine may
be shared).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import tempfile
import time
from pathlib import Path

from _common import MODEL, fake_server, qa_suite, table
from wikiskill.benchmarks import load_benchmark
from wikiskill.contracts.running import AgentRecipe, Executor, Place
from wikiskill.core.config import Config, SkillsSettings
from wikiskill.core.prompts import render
from wikiskill.knowledge.skillsblock import render_skills
from wikiskill.llm.backend import import_litellm
from wikiskill.llm.meter import Meter
from wikiskill.run.executors import open_executor
from wikiskill.run.team import Team
from wikiskill.store.results import ResultCache


class Bench:
    def __init__(self, root: Path, base_url: str, size: int):
        self.root = root
        self.config = Config(
            benchmark=f"jsonl:{qa_suite(root / 'suite', {'train': size, 'val': 1, 'test': 1})}",
            model=MODEL,
            api_base=base_url,
        )
        self.benchmark = load_benchmark(self.config, root)
        self.all_tasks = self.benchmark.tasks("train")
        self.runs = 0

    def tasks(self, n: int):
        assert n <= len(self.all_tasks)
        return self.all_tasks[:n]

    def _cache(self) -> ResultCache:
        self.runs += 1  # a fresh cache each run: nothing is ever answered from disk here
        return ResultCache(self.root / "state", f"run-{self.runs}")

    def open(self, kind: str, workers: int) -> Executor:
        config = self.config.model_copy(update={"executor": kind, "workers": workers})
        team = Team(config, self.benchmark, Meter(), self.root / "state")
        return open_executor(config, Place(self.root, self.root / "state"), team)

    def run(self, executor: Executor, concurrency: int, n: int) -> float:
        """tasks/s of `n` tasks on an executor that is already open."""
        tasks = self.tasks(n)
        started = time.perf_counter()
        results = executor.run(AgentRecipe(self.config, ()), tasks, concurrency, Meter(), self._cache())
        elapsed = time.perf_counter() - started
        assert [t.task_id for t in results] == [t.id for t in tasks] and all(t.score == 1.0 for t in results)
        return n / elapsed

    def start_up(self, kind: str, workers: int) -> tuple[Executor, float]:
        """An open executor, and what its start-up cost: a cold run of one task per worker less a
        warm one."""
        started = time.perf_counter()
        executor = self.open(kind, workers)
        self.run(executor, workers, workers)
        cold = time.perf_counter() - started
        started = time.perf_counter()
        self.run(executor, workers, workers)
        return executor, cold - (time.perf_counter() - started)

    def requests(self, n: int) -> list[list[dict]]:
        """The messages wikiskill's QA agent sends for the first `n` tasks (no skills)."""
        system = render("agent_qa", skills_block=render_skills([], SkillsSettings(), ""))
        return [[{"role": "system", "content": system}, {"role": "user", "content": t.question}] for t in self.tasks(n)]

    def bare(self, concurrency: int, n: int) -> tuple[float, float]:
        """A bare litellm asyncio loop making the same calls; returns (calls/s, CPU ms per call)."""
        cpu, started = time.process_time(), time.perf_counter()
        asyncio.run(_bare_loop(self.config.api_base, self.requests(n), concurrency))
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        return n / elapsed, 1000 * cpu / n

    def bare_processes(self, concurrency: int, n: int, processes: int) -> float:
        """The bare loop in `processes` processes sharing `concurrency` as the workers do, started
        together (after their imports, unlike the workers); calls/s from the first start to the last end."""
        requests = self.requests(n)
        start_at = time.time() + 1.0
        shares = [concurrency // processes + (i < concurrency % processes) for i in range(processes)]
        jobs = [(self.config.api_base, requests[i::processes], max(1, shares[i]), start_at) for i in range(processes)]
        with multiprocessing.get_context("forkserver").Pool(processes) as pool:
            spans = pool.starmap(_timed_bare_loop, jobs)
        return n / (max(end for _, end in spans) - min(start for start, _ in spans))


async def _bare_loop(api_base: str, requests: list[list[dict]], concurrency: int) -> None:
    litellm = import_litellm()
    limit = asyncio.Semaphore(concurrency)

    async def one(messages: list[dict]) -> None:
        async with limit:
            # the same arguments LiteLLMModel sends
            await litellm.acompletion(
                model=MODEL,
                messages=messages,
                temperature=0.0,
                api_base=api_base,
                api_key="no-key-needed",
                timeout=120.0,
                num_retries=0,
                max_retries=0,
            )

    await asyncio.gather(*(one(messages) for messages in requests))


def _timed_bare_loop(
    api_base: str, requests: list[list[dict]], concurrency: int, start_at: float
) -> tuple[float, float]:
    asyncio.run(_bare_loop(api_base, requests[:2], 1))  # warm: litellm's first call builds its clients
    time.sleep(max(0.0, start_at - time.time()))
    started = time.time()
    asyncio.run(_bare_loop(api_base, requests, concurrency))
    return started, time.time()


def size(concurrency: int, waves: int) -> int:
    return max(40, waves * concurrency)


def best(repeats: int, run) -> float:
    return max(run() for _ in range(repeats))


def ceiling(root: Path, repeats: int) -> tuple[float, float]:
    """litellm's CPU ms per call and the calls/s one loop reached, at zero latency and C = 16."""
    with fake_server(0.0) as url:
        bench = Bench(root / "ceiling", url, 500)
        bench.bare(16, 100)  # warm-up
        runs = [bench.bare(16, 500) for _ in range(repeats)]
        return min(cpu for _, cpu in runs), max(rate for rate, _ in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32, 64])
    parser.add_argument("--workers", type=int, default=2, help="worker processes / Ray actors")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--waves", type=int, default=32, help="tasks per run = max(40, waves x C)")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cpu_ms, saturated = ceiling(root, args.repeats)
        limit = 1000 / cpu_ms
        print(
            f"litellm CPU per call: {cpu_ms:.2f} ms -> one event loop's ceiling 1/cpu = {limit:.0f} calls/s "
            f"(reached at zero latency: {saturated:.0f} calls/s)\n"
        )
        rows, start_ups = [], []
        w = args.workers
        kinds = [("local", 1), ("processes", w), ("ray", w)]
        with fake_server(args.latency) as url:
            bench = Bench(root / "main", url, max(size(c, args.waves) for c in args.concurrency))
            bench.bare(8, 40)  # warm-up
            executors: dict[str, Executor] = {}
            try:
                for kind, workers in kinds:
                    executors[kind], cost = bench.start_up(kind, workers)
                    start_ups.append([kind.value, workers, f"{cost:.2f}"])
                for c in args.concurrency:
                    n = size(c, args.waves)
                    bare = best(args.repeats, lambda c=c, n=n: bench.bare(c, n)[0])
                    bare_w = best(args.repeats, lambda c=c, n=n: bench.bare_processes(c, n, w))
                    rates = {
                        kind: best(args.repeats, lambda kind=kind, c=c, n=n: bench.run(executors[kind], c, n))
                        for kind, _ in kinds
                    }
                    local, processes, on_ray = (rates[kind] for kind, _ in kinds)
                    rows.append(
                        [
                            c,
                            n,
                            c / args.latency,
                            round(limit),
                            bare,
                            local,
                            f"{local / bare:.1%}",
                            bare_w,
                            processes,
                            f"{processes / bare_w:.1%}",
                            on_ray,
                            f"{on_ray / bare_w:.1%}",
                        ]
                    )
                    print(f"C={c} done", flush=True)
            finally:
                for executor in executors.values():
                    executor.close()
        print()
        print(
            table(
                [
                    "C",
                    "tasks",
                    "ideal C/L",
                    "ceiling",
                    "bare litellm",
                    "local",
                    "vs bare",
                    f"bare x{w} procs",
                    f"processes x{w}",
                    "vs bare",
                    f"ray x{w}",
                    "vs bare",
                ],
                rows,
            )
        )
        print(
            f"\ntasks/s; ceiling = 1 / litellm CPU per call; 'bare x{w} procs' = the bare loop in "
            f"{w} processes started together after their imports; executors opened once, start-up apart\n"
        )
        print(table(["executor", "workers", "start-up s"], start_ups))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
