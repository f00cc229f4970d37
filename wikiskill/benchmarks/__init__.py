"""Benchmark registry: built-in suites by name, and `jsonl:DIR` for your own QA data."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..config import Config
from ..errors import BenchmarkError
from ..resources import data_dir
from .base import SPLITS, Benchmark, EnvStep, InteractiveBenchmark, QABenchmark, Split, Task, TextEnv

BUILTIN_QA = {"example-qa": "example-qa"}
INTERACTIVE = ("textworld-cooking",)
JSONL_PREFIX = "jsonl:"

__all__ = ["SPLITS", "Benchmark", "EnvStep", "InteractiveBenchmark", "QABenchmark", "Split", "Task", "TextEnv", "load_benchmark", "known_benchmarks", "is_known"]


def known_benchmarks() -> list[str]:
    return [*INTERACTIVE, *BUILTIN_QA, f"{JSONL_PREFIX}DIR"]


def is_known(name: str) -> bool:
    """A built-in suite's name, or `jsonl:` followed by a folder."""
    return name in INTERACTIVE or name in BUILTIN_QA or (name.startswith(JSONL_PREFIX) and bool(jsonl_folder(name)))


def jsonl_folder(name: str) -> str:
    return name[len(JSONL_PREFIX):].strip()


def load_benchmark(config: Config, root: Path | None = None,
                   progress: Callable[[int, int], None] | None = None) -> Benchmark:
    """The benchmark a workspace's config names; relative jsonl paths are taken from `root`.

    `progress(done, total)` reports one-off preparation such as generating games.
    """
    name = config.benchmark
    if name.startswith(JSONL_PREFIX):
        from .jsonl import JsonlQA

        directory = Path(jsonl_folder(name)).expanduser()
        if not directory.is_absolute() and root is not None:
            directory = root / directory
        return JsonlQA(directory)
    if name in BUILTIN_QA:
        from .jsonl import JsonlQA

        return JsonlQA(data_dir("benchmarks") / BUILTIN_QA[name], name=name)
    if name == "textworld-cooking":
        from .textworld_cooking import TextWorldCooking

        return TextWorldCooking(n_train=config.splits.train, n_val=config.splits.val, n_test=config.splits.test,
                                progress=progress)
    raise BenchmarkError(f"unknown benchmark {name!r}; choose one of: {', '.join(known_benchmarks())}")
