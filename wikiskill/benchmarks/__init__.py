"""Benchmarks: what a suite is (`base`), and the registry that finds suites by name (`registry`)."""

from __future__ import annotations

from .base import (SPLITS, Benchmark, BenchmarkKind, BenchmarkSpec, EnvStep, HasReferenceActions, InteractiveBenchmark,
                   QABenchmark, Split, SplitCounts, Task, TextEnv)
from .registry import (BenchmarkFamily, FamilyListing, LoadRequest, canonical_name, family, family_names, is_known,
                       known_benchmarks, list_families, load_benchmark, missing_requirements, resolve, spec_of)

__all__ = [
    "SPLITS", "Benchmark", "BenchmarkFamily", "BenchmarkKind", "BenchmarkSpec", "EnvStep", "FamilyListing", "HasReferenceActions", "InteractiveBenchmark",
    "LoadRequest", "QABenchmark", "Split", "SplitCounts", "Task", "TextEnv", "canonical_name", "family",
    "family_names", "is_known", "known_benchmarks", "list_families", "load_benchmark", "missing_requirements", "resolve", "spec_of",
]
