"""The `scienceworld` family, named here without starting ScienceWorld's JVM or importing it."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..core.errors import BenchmarkError
from .base import Benchmark, BenchmarkKind, BenchmarkSpec, LoadRequest, SplitCounts


class ScienceWorldFamily:
    """`scienceworld[:<task-name>]`: ScienceWorld's elementary-science tasks in a simulated world."""

    spec = BenchmarkSpec(
        family="scienceworld",
        kind=BenchmarkKind.INTERACTIVE,
        summary="ScienceWorld's 30 elementary-science task types in a simulated world, its own variation splits",
        argument="<task-name>",
        default_splits=SplitCounts(train=30, val=30, test=60),
        max_steps=100,
        version="1",
        needs="wikiskill[scienceworld] and Java 17",
        requires=("scienceworld",),
    )

    def check(self, argument: str | None, base: Path | None = None) -> str | None:
        """A task name or id (`boil`, `1-1`) as ScienceWorld names it; unchecked where it is not installed."""
        if argument is None:
            return None
        try:
            from scienceworld.constants import ID2TASK
            from scienceworld.utils import infer_task
        except ImportError:
            return argument
        names = sorted(infer_task(task) for task in ID2TASK)
        name: str = infer_task(argument)
        if name not in names:
            raise BenchmarkError(f"unknown ScienceWorld task {argument!r}; choose one of: {', '.join(names)}")
        return name

    def load(self, argument: str | None, request: LoadRequest) -> Benchmark:
        if shutil.which("java") is None:
            raise BenchmarkError(
                "scienceworld runs on Java 17, and there is no `java` on PATH "
                "(Debian/Ubuntu: apt-get install openjdk-17-jre-headless)"
            )
        from .scienceworld import ScienceWorld

        return ScienceWorld(
            argument,
            request.split_counts(self.spec),
            configured=frozenset(request.configured_splits()),
            spec=self.spec,
            name=self.spec.benchmark_name(argument),
        )
