"""The built-in benchmark families, registered as entry points like any plugin.

Each family imports its suite's module only in `load`, so listing or checking names stays cheap.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import BenchmarkError
from ..resources import data_dir
from .base import Benchmark, BenchmarkKind, BenchmarkSpec, SplitCounts
from .registry import LoadRequest

QA_MAX_STEPS = 30
"""The config's default step limit; a QA agent answers in one reply, so it never reaches it."""


class TextWorldCookingFamily:
    spec = BenchmarkSpec(
        family="textworld-cooking",
        kind=BenchmarkKind.INTERACTIVE,
        summary="TextWorld cooking games (First TextWorld Problems recipes), generated offline",
        default_splits=SplitCounts(train=39, val=18, test=134),
        max_steps=40,
        offline_playable=True,
        version="1",
        requires=("textworld",),
    )

    def check(self, argument: str | None, base: Path | None = None) -> str | None:
        return argument

    def load(self, argument: str | None, request: LoadRequest) -> Benchmark:
        from .textworld_cooking import TextWorldCooking

        counts = request.split_counts(self.spec)
        return TextWorldCooking(n_train=counts["train"], n_val=counts["val"], n_test=counts["test"],
                                progress=request.progress)


class ExampleQAFamily:
    spec = BenchmarkSpec(
        family="example-qa",
        kind=BenchmarkKind.QA,
        summary="a small arithmetic and text QA suite that ships with wikiskill",
        max_steps=QA_MAX_STEPS,
        version="1",
    )

    def check(self, argument: str | None, base: Path | None = None) -> str | None:
        return argument

    def load(self, argument: str | None, request: LoadRequest) -> Benchmark:
        from .jsonl import JsonlQA

        return JsonlQA(data_dir("benchmarks") / "example-qa", name=self.spec.family, spec=self.spec)


class JsonlFamily:
    spec = BenchmarkSpec(
        family="jsonl",
        kind=BenchmarkKind.QA,
        summary="your own QA data: DIR/{train,val,test}.jsonl with id, question, answer per line",
        argument="DIR",
        argument_required=True,
        max_steps=QA_MAX_STEPS,
        version="1",
    )

    def check(self, argument: str | None, base: Path | None = None) -> str | None:
        """With a `base`, the folder is made absolute and its files are checked line by line."""
        if argument is None or base is None:
            return argument
        from .jsonl import JsonlQA

        directory = (base / Path(argument).expanduser()).resolve()
        JsonlQA(directory)
        return str(directory)

    def load(self, argument: str | None, request: LoadRequest) -> Benchmark:
        from .jsonl import JsonlQA

        if argument is None:
            raise BenchmarkError("jsonl needs a folder: jsonl:DIR")
        directory = Path(argument).expanduser()
        if not directory.is_absolute() and request.root is not None:
            directory = request.root / directory
        return JsonlQA(directory, spec=self.spec)
