"""Task suites: what a suite is and how each kind is scored (`base`), the registry that
finds families by name through the `wikiskill.benchmarks` entry points (`registry`), and the
built-in families and suites, one module each, each family loading its own suites (the Harbor
family fetches a registry dataset as it loads it, `harbor_datasets`). It may import `core` only:
a suite knows nothing of workspaces, skills, models or the loop. Its sections of
wikiskill.yaml (`harbor`, `splits`) are `settings`, in core's layer."""

from __future__ import annotations

from .base import (
    SPLITS,
    Benchmark,
    BenchmarkFamily,
    BenchmarkKind,
    BenchmarkSpec,
    EnvStep,
    FunctionCall,
    HasReferenceActions,
    HasReferenceCalls,
    InteractiveBenchmark,
    LoadRequest,
    QABenchmark,
    ReferenceSuite,
    Split,
    SplitCounts,
    Task,
    TextEnv,
    ToolSession,
    ToolUseBenchmark,
    UserTurn,
    normalized_score,
)
from .registry import (
    FamilyListing,
    canonical_name,
    family,
    family_names,
    is_known,
    known_benchmarks,
    list_families,
    load_benchmark,
    missing_requirements,
    resolve,
    spec_of,
)

__all__ = [
    "SPLITS",
    "Benchmark",
    "BenchmarkFamily",
    "BenchmarkKind",
    "BenchmarkSpec",
    "EnvStep",
    "FamilyListing",
    "FunctionCall",
    "HasReferenceActions",
    "HasReferenceCalls",
    "InteractiveBenchmark",
    "LoadRequest",
    "QABenchmark",
    "ReferenceSuite",
    "Split",
    "SplitCounts",
    "Task",
    "TextEnv",
    "ToolSession",
    "ToolUseBenchmark",
    "UserTurn",
    "normalized_score",
    "canonical_name",
    "family",
    "family_names",
    "is_known",
    "known_benchmarks",
    "list_families",
    "load_benchmark",
    "missing_requirements",
    "resolve",
    "spec_of",
]
