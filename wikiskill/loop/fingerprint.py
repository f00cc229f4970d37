"""Evaluation fingerprints: one id over everything that decides a score.

A score means something only together with what produced it. `EvalSetup` holds all of that except
the skills: the benchmark and its version, the split and the tasks themselves, the agent's model
and settings, how skills are rendered, the task agent's prompt templates, the wikiskill version,
the seed and the repeats. The fingerprint of an evaluation is the setup's id with the id of the
skills the agent is given (`evaluation.skills_id`: skills/ without PURPOSE.md). It keys the result cache, finds the incumbent, and is a trailer on every commit that
records a score, so the gate compares only evaluations that differ in the skills alone.

Left out on purpose: `api_base` (where a model is served, not which model), retries, timeouts and
the response cache (they change how a score is obtained, not what it is).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib.metadata import PackageNotFoundError, version

from pydantic import BaseModel

from ..benchmarks import Benchmark, Split
from ..core.config import Config
from ..core.resources import data_dir

AGENT_TEMPLATE_PREFIXES = ("agent_", "skills_")
"""The task agent's prompts are the templates in prompts/ whose names start with these."""


class EvalSetup(BaseModel):
    """Everything but the skills that decides the score of an evaluation."""

    benchmark: str
    benchmark_version: str
    split: str
    tasks: str
    """Digest of the split's task ids, questions and reference answers, in order."""
    agent: dict
    skills_rendering: dict
    seed: int
    repeats: int
    """How many times each task runs; repeat r runs with seed `seed + r`."""
    first_repeat: int
    """0 for a validation; a confirmation starts after the validation's repeats (fresh seeds)."""
    prompts: str
    wikiskill: str

    @property
    def id(self) -> str:
        return digest(self.model_dump())

    def fingerprint(self, skills_id: str) -> str:
        return digest([self.id, skills_id])


def eval_setup(config: Config, benchmark: Benchmark, split: Split, repeats: int = 1,
               first_repeat: int = 0) -> EvalSetup:
    agent = config.role("agent")
    return EvalSetup(
        benchmark=config.benchmark,
        benchmark_version=benchmark.spec.version,
        split=split,
        tasks=digest([[t.id, t.question, t.answer] for t in benchmark.tasks(split)]),
        agent={"model": agent.model, "temperature": agent.temperature, "max_tokens": agent.max_tokens,
               "max_steps": config.agent.max_steps},
        skills_rendering=config.skills.model_dump(),
        seed=config.seed,
        repeats=repeats,
        first_repeat=first_repeat,
        prompts=agent_prompts_digest(),
        wikiskill=wikiskill_version(),
    )


def digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:24]


@cache
def agent_prompts_digest() -> str:
    folder = data_dir("prompts")
    files = sorted(p for p in folder.glob("*.j2") if p.name.startswith(AGENT_TEMPLATE_PREFIXES))
    return digest([[p.name, p.read_text(encoding="utf-8")] for p in files])


@cache
def wikiskill_version() -> str:
    try:
        return version("wikiskill")
    except PackageNotFoundError:
        return "unknown"
