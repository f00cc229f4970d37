"""Evaluation fingerprints: one id over everything that decides a score.

A score means something only together with what produced it. `EvalSetup` holds all of that except
the skills: the benchmark and its version, the split and the tasks themselves, the agent's runner,
model and settings (`AGENT_SETTINGS`; for a Python runner, the source of its module; for a CLI, its
arguments, version and driving code), how skills are rendered, the templates the task agent renders
(`AGENT_TEMPLATES`), the source of the task agent's own code (`AGENT_CODE`), the wikiskill version,
the seed and the repeats; for a task-folder suite also its files, check and suite.yaml, and a
judge's model, settings, prompts and code (`scoring`). The fingerprint of an evaluation is the
setup's id with the id of the skills the agent is given
(`store.evaluations.skills_id`: skills/ without PURPOSE.md). It keys the result cache, finds the
incumbent, and is a trailer on every commit that records a score, so the gate compares only
evaluations that differ in the skills alone. A change to any of it makes a workspace's next `evolve`
re-validate its incumbent once, under the new setup.

The task agent's code is what decides what it is shown and what it does: the agents (QA,
interactive, tool-use, offline) and the modules they build prompts and tools with (the skills
block, skill files, retrieval ranking, the text tool protocol and its JSON reading, fitting into
the context window, the replies it reads and appends (`llm/chat.py`), the `read_wiki` tool and the
pages it reads). Left out on purpose: the model transport (`llm/model.py`, `llm/call.py` and the
modules they use: retries, accounting, caching; the request shaping they do lives in the included
context.py and toolcalls.py), the benchmarks (their `version` and task digest stand for them) and
the configuration (its settings enter one by one).

Left out of the settings on purpose: `api_base` (where a model is served, not which model), the
agent's `response_format` (the task agent never asks for a JSON reply), retries, timeouts and the
response cache (they change how a score is obtained, not what it is).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from pydantic import BaseModel

from ..benchmarks import Benchmark, Split
from ..benchmarks.base import setup_digest_of
from ..core.config import AgentSettings, Config, Role
from ..core.resources import data_dir
from ..roles.coding_agents.presets import preset_fingerprint
from ..roles.judge import TEMPLATES
from ..roles.python_agent import runner_code

PACKAGE = Path(__file__).resolve().parents[1]

AGENT_SETTINGS = (
    "runner",
    "kind",
    "model",
    "temperature",
    "max_tokens",
    "tool_protocol",
    "context_window",
    "max_steps",
    "edit_format",
    "wiki_access",
)
"""The task agent's settings (`agent.*`) that decide a score."""

AGENT_TEMPLATES = (
    "agent_qa",
    "agent_interactive",
    "agent_interactive_turn",
    "agent_tool_use",
    "agent_workdir",
    "agent_workdir_bash",
    "agent_workdir_task",
    "agent_workdir_nudge",
    "agent_workdir_format",
    "agent_workdir_stuck",
    "agent_workdir_edits",
    "skills_full",
    "skills_index",
    "tools_text",
)
"""The templates in prompts/ that the task agent renders."""

AGENT_CODE = (
    "roles/agent.py",
    "roles/tool_agent.py",
    "roles/shell_agent.py",
    "roles/bash_block.py",
    "roles/workdir_listing.py",
    "roles/edit_blocks.py",
    "roles/file_edits.py",
    "roles/stuck.py",
    "environments/host.py",
    "environments/output.py",
    "environments/bubblewrap.py",
    "environments/container.py",
    "environments/base.py",
    "environments/runtime.py",
    "environments/mounts.py",
    "environments/storage.py",
    "environments/network.py",
    "benchmarks/harbor_network.py",
    "benchmarks/harbor_env.py",
    "roles/reference_agent.py",
    "roles/offline/agent.py",
    "roles/offline/rules.py",
    "knowledge/skillsblock.py",
    "knowledge/skills.py",
    "core/yaml_reading.py",
    "knowledge/search.py",
    "llm/toolcalls.py",
    "llm/jsontext.py",
    "llm/context.py",
    "llm/chat.py",
    "roles/wikitool.py",
    "knowledge/shelf.py",
    "knowledge/pages.py",
)
"""The task agent's own modules, relative to the package."""

JUDGE_SETTINGS = ("model", "temperature", "max_tokens", "samples", "context_window")
"""The judge's settings (`judge.*`) that decide a judged suite's score."""

SCORING_CODE = ("roles/judge.py", "run/scorers.py")
"""The scorers' own modules, relative to the package."""

VERIFIER_CODE = ("run/harbor_tasks.py", "run/scorers.py")
"""The modules that verify a Harbor task and read its reward, relative to the package."""


class EvalSetup(BaseModel):
    """Everything but the skills that decides the score of an evaluation."""

    benchmark: str
    benchmark_version: str
    split: str
    tasks: str
    """Digest of the split's task ids, questions and reference answers, in order."""
    agent: dict[str, object]
    skills_rendering: dict[str, object]
    seed: int
    repeats: int
    """How many times each task runs; repeat r runs with seed `seed + r`."""
    first_repeat: int
    """0 for a validation; a confirmation starts after the validation's repeats (fresh seeds)."""
    prompts: str
    agent_code: str
    wikiskill: str
    scoring: str | None = None
    """A suite's own setup beyond its tasks (a task folder's files, checks, rubrics and
    suite.yaml) and its judge's model, settings, prompts and code; None for other suites, so
    their setups keep their ids."""

    @property
    def id(self) -> str:
        setup = self.model_dump()
        if setup["scoring"] is None:
            del setup["scoring"]
        return digest(setup)

    def fingerprint(self, skills_id: str) -> str:
        return digest([self.id, skills_id])


def eval_setup(
    config: Config, benchmark: Benchmark, split: Split, repeats: int = 1, first_repeat: int = 0
) -> EvalSetup:
    agent = config.agent.model_copy(update={"model": config.role(Role.AGENT).model})
    return EvalSetup(
        benchmark=config.benchmark,
        benchmark_version=benchmark.spec.version,
        split=split,
        tasks=digest([[t.id, t.question, t.answer] for t in benchmark.tasks(split)]),
        agent=agent_settings(agent),
        skills_rendering=config.skills.model_dump(exclude={"locked"}),
        seed=config.seed,
        repeats=repeats,
        first_repeat=first_repeat,
        prompts=agent_prompts_digest(),
        agent_code=agent_code_digest(),
        wikiskill=wikiskill_version(),
        scoring=scoring_digest(config, benchmark),
    )


def scoring_digest(config: Config, benchmark: Benchmark) -> str | None:
    """What decides a suite's scores beyond its tasks: its `setup_digest`, and for a judged suite
    the judge's settings (`JUDGE_SETTINGS`), its templates and its code."""
    suite_digest = setup_digest_of(benchmark)
    if suite_digest is None:
        return None
    parts: list[object] = [suite_digest, benchmark.spec.kind]
    if benchmark.spec.containers:
        parts.append(digest([[path, (PACKAGE / path).read_text(encoding="utf-8")] for path in VERIFIER_CODE]))
    if benchmark.spec.judged:
        judge = config.judge.model_copy(update={"model": config.role(Role.JUDGE).model})
        parts += [judge.model_dump(mode="json", include=set(JUDGE_SETTINGS)), judge_digest()]
    return digest(parts)


def agent_settings(agent: AgentSettings) -> dict[str, object]:
    """The agent's settings that decide a score. The `builtin` runner is left out, so setups from
    before runners existed keep their ids; so is an unset `kind` (the built-in agent of the
    suite's kind), and a kind that is set adds its name; a Python runner adds the digest of its
    code; a CLI runner its preset's arguments (the argv minus per-task values), the CLI's
    `--version` and the digest of the code that drives it."""
    settings = agent.model_dump(mode="json", include=set(AGENT_SETTINGS))
    if agent.kind is None:
        del settings["kind"]
    if agent.builtin:
        del settings["runner"]
    elif agent.python:
        settings["runner_code"] = runner_code(agent.runner)
    elif agent.cli:
        settings["cli"] = preset_fingerprint(agent, agent.model or "")
    return settings


def digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:24]


@cache
def agent_prompts_digest() -> str:
    folder = data_dir("prompts")
    return digest([[name, (folder / f"{name}.j2").read_text(encoding="utf-8")] for name in AGENT_TEMPLATES])


@cache
def judge_digest() -> str:
    folder = data_dir("prompts")
    return digest(
        [[name, (folder / f"{name}.j2").read_text(encoding="utf-8")] for name in TEMPLATES]
        + [[path, (PACKAGE / path).read_text(encoding="utf-8")] for path in SCORING_CODE]
    )


@cache
def agent_code_digest() -> str:
    return digest([[path, (PACKAGE / path).read_text(encoding="utf-8")] for path in AGENT_CODE])


@cache
def wikiskill_version() -> str:
    try:
        return version("wikiskill")
    except PackageNotFoundError:
        return "unknown"
