"""The kinds of replaceable part, one `PartKind` each: the built-ins by name (the first is the
default) and the entry-point group a plugin package registers its own under. A built-in's name
is written here and nowhere else: its class takes it from `@KIND.builtin`, and the settings,
their error messages and the reference docs (docs/reference/parts.md) read it from here.

A new kind of part (the task environments of a container suite, say) is one more PartKind here,
with its group and its built-ins, and one `Registry` beside its contract (`contracts/`), which
core may not import."""

from __future__ import annotations

from .registry import PartKind

LOCAL_EXECUTOR = "local"
"""The executor of one worker, and the one `workers: 1` runs on."""
PROCESS_POOL = "processes"
"""The executor `workers` above 1 runs on when `executor` is unset."""

BENCHMARK_FAMILY = PartKind(
    what="benchmark family",
    setting="benchmark",
    group="wikiskill.benchmarks",
    builtins={
        "textworld-cooking": "wikiskill.benchmarks.builtin:TextWorldCookingFamily",
        "textworld": "wikiskill.benchmarks.builtin:TextWorldFamily",
        "reasoning-gym": "wikiskill.benchmarks.builtin:ReasoningGymFamily",
        "example-qa": "wikiskill.benchmarks.builtin:ExampleQAFamily",
        "jsonl": "wikiskill.benchmarks.builtin:JsonlFamily",
        "tasks": "wikiskill.benchmarks.builtin:TaskFoldersFamily",
        "scienceworld": "wikiskill.benchmarks.scienceworld_family:ScienceWorldFamily",
        "bfcl": "wikiskill.benchmarks.bfcl_family:BfclFamily",
        "harbor": "wikiskill.benchmarks.builtin:HarborFamily",
    },
)
"""A family's `spec.family` must be the name it is registered under (`benchmarks/registry.py`)."""

SCORER = PartKind(
    what="scorer",
    setting="scorer",
    group="wikiskill.scorers",
    builtins={
        "exact": "wikiskill.benchmarks.scoring:Exact",
        "contains": "wikiskill.benchmarks.scoring:Contains",
        "numeric": "wikiskill.benchmarks.scoring:Numeric",
        "regex": "wikiskill.benchmarks.scoring:Regex",
    },
)
"""The scorers of a QA suite's answers, named by `scorer` in a jsonl suite's suite.json or a
task-folder suite's suite.yaml (whose workdir scorers, `command` and `judge`, are not answer scorers)."""

GATE_POLICY = PartKind(
    what="gate policy",
    setting="gate.policy",
    group="wikiskill.gate_policies",
    named_by="name",
    builtins={
        "strict": "wikiskill.loop.gate_policies:StrictPolicy",
        "paired": "wikiskill.loop.gate_policies:PairedPolicy",
        "confirm": "wikiskill.loop.gate_policies:ConfirmPolicy",
        "no_regression": "wikiskill.loop.gate_policies:NoRegressionPolicy",
        "sequential": "wikiskill.loop.sequential:SequentialPolicy",
    },
)

EXECUTOR = PartKind(
    what="executor",
    setting="executor",
    group="wikiskill.executors",
    builtins={
        LOCAL_EXECUTOR: "wikiskill.run.executors.local:LocalLoop",
        PROCESS_POOL: "wikiskill.run.executors.processes:ProcessPool",
        "ray": "wikiskill.run.executors.ray_actors:RayActors",
    },
)

CLI_PRESET = PartKind(
    what="coding-agent CLI preset",
    setting="agent.runner",
    group="wikiskill.cli_presets",
    named_by="name",
    builtins={
        "qwen-code": "wikiskill.roles.coding_agents.qwen_code:QwenCode",
        "claude-code": "wikiskill.roles.coding_agents.claude_code:ClaudeCode",
        "codex": "wikiskill.roles.coding_agents.codex:Codex",
        "gemini-cli": "wikiskill.roles.coding_agents.gemini_cli:GeminiCli",
        "command": "wikiskill.roles.coding_agents.command:CommandPreset",
    },
)

EXPORT_TARGET = PartKind(
    what="export target",
    setting="--target",
    group="wikiskill.export_targets",
    named_by="kind",
    builtins={
        "agents": "wikiskill.integrations.export_targets:AgentSkills",
        "claude": "wikiskill.integrations.export_targets:ClaudeCode",
        "codex": "wikiskill.integrations.export_targets:Codex",
        "harbor": "wikiskill.integrations.export_targets:HarborSkills",
    },
)

SESSION_FORMAT = PartKind(
    what="transcript format",
    setting="--format",
    group="wikiskill.session_formats",
    named_by="format",
    builtins={
        "claude-code": "wikiskill.integrations.sessions:ClaudeCodeParser",
        "openai-messages": "wikiskill.integrations.sessions:OpenAIMessagesParser",
    },
)

TASK_AGENT = PartKind(
    what="task agent",
    setting="agent.kind",
    group="wikiskill.task_agents",
    named_by="name",
    builtins={
        "answer": "wikiskill.roles.agent:QAAgent",
        "interact": "wikiskill.roles.agent:InteractiveAgent",
        "call-tools": "wikiskill.roles.tool_agent:ToolUseAgent",
        "shell": "wikiskill.roles.shell_agent:ShellAgent",
    },
)
"""The LLM task agents of the built-in runner, each playing one kind of suite (`plays`)."""

ROUND_STEP = PartKind(
    what="round step",
    setting="steps",
    group="wikiskill.round_steps",
    builtins={},
)
"""Steps of one's own that each round runs besides its built-in ones (`loop/steps/`), which keep
their fixed order and are not named here."""

REFERENCE_AGENT = PartKind(
    what="reference agent",
    setting="agent.runner",
    group="wikiskill.reference_agents",
    named_by="name",
    builtins={
        "oracle": "wikiskill.roles.reference_agent:OracleAgent",
        "nop": "wikiskill.roles.reference_agent:NopAgent",
    },
)
"""The agents that check a suite of containers rather than play it: `oracle` runs each task's
solution, `nop` does nothing; a sound suite scores them 1 and 0 (`check-suite`)."""

TASK_RUNNER = PartKind(
    what="agent runner",
    setting="agent.runner",
    group="wikiskill.runners",
    named_by="name",
    builtins={
        "builtin": "wikiskill.roles.runners.builtin:BuiltinRunner",
        "python": "wikiskill.roles.runners.python:PythonRunner",
        "cli": "wikiskill.roles.runners.cli:CliRunner",
        "reference": "wikiskill.roles.runners.reference:ReferenceRunner",
    },
)
"""The kinds of task-agent runner, each claiming the `agent.runner` values it takes (`builtin`,
`python:MODULE:FUNCTION`, a CLI preset's name, a reference agent's), tried in this order, then the
plugins'. The first is the default, whose name is its one value."""
