"""Every kind of replaceable part as its `Registry`, each declared beside its contract, for the
reference docs (docs/reference/parts.md) and the tests. Nothing in the product imports it: a
part is loaded through its own kind's registry."""

from __future__ import annotations

from .benchmarks.base import BENCHMARK_FAMILIES, SCORERS
from .contracts.coding_agent import CLI_PRESETS
from .contracts.gate import GATE_POLICIES
from .contracts.integrations import EXPORT_TARGETS, SESSION_FORMATS
from .contracts.roles import REFERENCE_AGENTS, TASK_AGENTS
from .contracts.runners import TASK_RUNNERS
from .contracts.running import EXECUTORS
from .core.registry import Registry
from .loop.steps import ROUND_STEPS

REGISTRIES: tuple[Registry[object], ...] = (
    BENCHMARK_FAMILIES,
    SCORERS,
    GATE_POLICIES,
    EXECUTORS,
    CLI_PRESETS,
    EXPORT_TARGETS,
    SESSION_FORMATS,
    TASK_AGENTS,
    ROUND_STEPS,
    REFERENCE_AGENTS,
    TASK_RUNNERS,
)
