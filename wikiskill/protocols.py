"""The contracts a plugin implements, in one import: `from wikiskill.protocols import GatePolicy`.
Each is stated once, in `contracts/` (the roles, running tasks, the gate, export targets,
session formats and experiment trackers) or beside its domain below it (`benchmarks.base` for
suites, `llm.chat.ChatModel` for the model a role talks to); this module only names them."""

from .benchmarks.base import (
    Benchmark,
    BenchmarkFamily,
    InteractiveBenchmark,
    QABenchmark,
    TextEnv,
    ToolSession,
    ToolUseBenchmark,
)
from .contracts.coding_agent import CliPreset, CliRun, CliTranscript
from .contracts.gate import BasePolicy, Evidence, GatePolicy, Look, Looks, ValidationPlan, Verdict
from .contracts.integrations import ExperimentTracker, ExportTarget, SessionParser
from .contracts.roles import (
    AgentKind,
    AgentParts,
    Check,
    EnvironmentAgent,
    Library,
    MaintainerResult,
    Player,
    ProposerResult,
    ReferenceAgent,
    Roles,
    Scorer,
    SkillProposer,
    TaskAgent,
    WikiMaintainer,
    WorkdirAgent,
)
from .contracts.runners import BaseRunner, TaskRunner
from .contracts.running import AgentRecipe, Executor, Place, Reporter
from .llm.chat import ChatModel

__all__ = [
    "AgentKind",
    "AgentParts",
    "AgentRecipe",
    "BasePolicy",
    "BaseRunner",
    "Benchmark",
    "BenchmarkFamily",
    "ChatModel",
    "Check",
    "CliPreset",
    "CliRun",
    "CliTranscript",
    "EnvironmentAgent",
    "Evidence",
    "Executor",
    "ExperimentTracker",
    "ExportTarget",
    "GatePolicy",
    "InteractiveBenchmark",
    "Library",
    "Look",
    "Looks",
    "MaintainerResult",
    "Place",
    "Player",
    "ProposerResult",
    "ReferenceAgent",
    "QABenchmark",
    "Reporter",
    "Roles",
    "Scorer",
    "SessionParser",
    "SkillProposer",
    "TaskAgent",
    "TaskRunner",
    "TextEnv",
    "ToolSession",
    "ToolUseBenchmark",
    "ValidationPlan",
    "Verdict",
    "WikiMaintainer",
    "WorkdirAgent",
]
