"""Evaluation fingerprints: one id over everything that decides a score.

A score means something only together with what produced it. `EvalSetup` holds all of that except
the skills: the benchmark and its version, the split and the tasks themselves, the agent's runner,
model and settings (`AGENT_SETTINGS`, as the runner records them: for a Python runner, the source
of its module; for a CLI, its arguments, version and preset code), how skills are rendered, the
templates the task agent renders (`AGENT_TEMPLATES`), the source of the runner's own code (the
modules its `TaskRunner.code` names and every module of the package they import), the wikiskill version,
the seed and the repeats; for a task-folder suite also its files, check and suite.yaml, and a
judge's model, settings, prompts and code (`scoring`). The fingerprint of an evaluation is the
setup's id with the id of the skills the agent is given
(`store.evaluations.skills_id`: skills/ without PURPOSE.md). It keys the result cache, finds the
incumbent, and is a trailer on every commit that records a score, so the gate compares only
evaluations that differ in the skills alone. A change to any of it makes a workspace's next `evolve`
re-validate its incumbent once, under the new setup.

The runner's code is what decides what the task agent is shown and what it does: for the built-in
runner the agents (QA, interactive, tool-use, offline) and the modules they build prompts and tools
with (the skills block, skill files, retrieval ranking, the text tool protocol and its JSON reading,
fitting into the context window, the replies it reads and appends (`llm/chat.py`), the `read_wiki`
tool and the pages it reads). It is derived from the imports, so a module an agent starts to import
enters it with no list to edit. Left out on purpose (`LEFT_OUT_CODE`, and what only they import):
the model transport (`llm/model.py`, `llm/call.py` and the modules they use: retries, accounting,
caching; the request shaping they do lives in context.py and toolcalls.py, which the built-in
runner names), the benchmarks (their `version` and task digest stand for them) and the
settings' models (`core/config.py`, `core/section.py` and each part's `settings` module: the
settings enter one by one).

Left out of the settings on purpose: `api_base` (where a model is served, not which model), the
agent's `response_format` (the task agent never asks for a JSON reply), retries, timeouts and the
response cache (they change how a score is obtained, not what it is).
"""

from __future__ import annotations

import ast
import hashlib
import json
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from pydantic import BaseModel

from ..benchmarks import Benchmark, Split
from ..benchmarks.base import setup_digest_of
from ..contracts.runners import runner_of
from ..core.config import Config
from ..core.resources import data_dir
from ..roles.judge import TEMPLATES
from ..roles.settings import AgentSettings, Role

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

SETTINGS_ENTER = "a settings model: the settings enter the fingerprint one by one"

LEFT_OUT_CODE = {
    "benchmarks": "the benchmark's version and task digest stand for it",
    "benchmarks.harbor": "the Harbor suite's names of its files; its setup digest stands for the tasks",
    "core.config": SETTINGS_ENTER,
    "core.section": SETTINGS_ENTER,
    "core.errors": "exception classes",
    "core.parts": "the registry's names; `agent.kind` and `agent.runner` enter the fingerprint",
    "core.prompts": "the renderer; the templates it renders are hashed themselves",
    "core.registry": "loads a part by its name, which enters the fingerprint",
    "core.resources": "finds the package's data folders; the templates in them are hashed themselves",
    "contracts.roles": "what an agent is made from and must do, no code of its own",
    "environments.settings": SETTINGS_ENTER,
    "knowledge.settings": SETTINGS_ENTER,
    "llm.credentials": "which variable holds a provider's key: the model transport",
    "roles.settings": SETTINGS_ENTER,
    "store.traces": "the record of a run, not what the agent does",
    "telemetry.spans": "spans that observe a run; they change nothing the agent does",
}
"""Modules a runner's code imports that are not part of its code, and why; what they import is
not followed either."""

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
        agent_code=agent_code_digest(runner_of(config.agent).code(config.agent)),
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
    """The agent's settings that decide a score, as its runner records them (`TaskRunner.fingerprint`:
    the `builtin` runner leaves its name out, so setups from before runners existed keep their ids;
    a Python runner adds the digest of its code; a CLI runner its preset's arguments, the CLI's
    `--version` and the preset's code). An unset `kind` (the built-in agent of the suite's kind)
    is left out, and a kind that is set adds its name."""
    settings = agent.model_dump(mode="json", include=set(AGENT_SETTINGS))
    if agent.kind is None:
        del settings["kind"]
    return runner_of(agent).fingerprint(agent, settings)


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


def _module_file(module: str) -> str | None:
    """The file of the package's module `module` (`roles.agent`), relative to the package."""
    path = module.replace(".", "/")
    for relative in (f"{path}.py", f"{path}/__init__.py"):
        if (PACKAGE / relative).is_file():
            return relative
    return None


def _imported(module: str, relative: str) -> set[str]:
    """The package's modules that the module `module` imports anywhere in its file: top level, in
    functions, under TYPE_CHECKING."""
    tree = ast.parse((PACKAGE / relative).read_text(encoding="utf-8"))
    package = module.split(".") if relative.endswith("__init__.py") else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            elif (node.module or "").startswith(f"{PACKAGE.name}."):
                source = (node.module or "").removeprefix(f"{PACKAGE.name}.")
            else:
                continue
            names = [f"{source}.{alias.name}".strip(".") for alias in node.names]
            found |= {name for name in names if _module_file(name)} or {source}
        elif isinstance(node, ast.Import):
            found |= {
                alias.name.removeprefix(f"{PACKAGE.name}.")
                for alias in node.names
                if alias.name.startswith(f"{PACKAGE.name}.")
            }
    return found


def code_files(modules: tuple[str, ...]) -> list[str]:
    """The files of `modules` and of every module of the package they import, and those import,
    except `LEFT_OUT_CODE`: relative to the package, sorted."""
    files: dict[str, str] = {}
    waiting = list(modules)
    while waiting:
        module = waiting.pop()
        while module and _module_file(module) is None:
            module = module.rpartition(".")[0]
        relative = _module_file(module) if module else None
        if relative is None or module in files or module in LEFT_OUT_CODE:
            continue
        files[module] = relative
        waiting += sorted(_imported(module, relative))
    return sorted(files.values())


@cache
def agent_code_digest(modules: tuple[str, ...]) -> str:
    """The runner's code (`TaskRunner.code`): the source of its modules and of what they import."""
    return digest([[path, (PACKAGE / path).read_text(encoding="utf-8")] for path in code_files(modules)])


@cache
def wikiskill_version() -> str:
    try:
        return version("wikiskill")
    except PackageNotFoundError:
        return "unknown"
