"""The `bfcl` family: BFCL v4 multi-turn function calling, named here without importing bfcl-eval."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import BenchmarkError
from .base import Benchmark, BenchmarkKind, BenchmarkSpec, LoadRequest, SplitCounts

BFCL_CATEGORIES = ("base", "miss_func", "miss_param", "long_context")
"""BFCL's offline multi-turn categories (`multi_turn_<category>`); web search and memory need the
network or a model download and are left out."""


class BfclFamily:
    """`bfcl[:<category>]`: BFCL v4 multi-turn function calling against its simulated APIs."""

    spec = BenchmarkSpec(
        family="bfcl",
        kind=BenchmarkKind.TOOL_USE,
        summary="BFCL v4 multi-turn function calling against its simulated APIs, scored by BFCL's checker",
        argument="<category>",
        default_splits=SplitCounts(train=20, val=20, test=50),
        max_steps=20,
        version="1",
        needs="wikiskill[bfcl] and `pip install --no-deps bfcl-eval==2026.3.23`",
        requires=("bfcl_eval", "mpmath", "filelock"),
    )

    def check(self, argument: str | None, base: Path | None = None) -> str | None:
        if argument is None:
            return None
        category = argument.removeprefix("multi_turn_").replace("-", "_")
        if category not in BFCL_CATEGORIES:
            raise BenchmarkError(f"unknown BFCL category {argument!r}; choose one of: {', '.join(BFCL_CATEGORIES)}")
        return category

    def load(self, argument: str | None, request: LoadRequest) -> Benchmark:
        from .bfcl import Bfcl

        categories = (argument,) if argument else BFCL_CATEGORIES
        counts = request.split_counts(self.spec)
        return Bfcl(categories, counts, spec=self.spec, name=self.spec.benchmark_name(argument))
