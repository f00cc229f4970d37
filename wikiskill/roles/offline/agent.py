"""The offline task agent: follows the rule lines of the active skills that match the
admissible actions, otherwise explores systematically (untried actions first, no loops), seeded."""

from __future__ import annotations

import asyncio
import random
import re
from typing import cast

from ...benchmarks import Benchmark, BenchmarkKind, EnvStep, InteractiveBenchmark, Task, normalized_score
from ...contracts.roles import AgentParts
from ...core.errors import BenchmarkError
from ...knowledge.skills import Skill
from ...store.traces import TraceStep, Trajectory
from .rules import Rule, parse_rules

_ROOM = re.compile(r"-=\s*(.+?)\s*=-")
LAST_RESORT = ("look", "inventory")


class OfflineAgent:
    def __init__(self, benchmark: Benchmark, skills: list[Skill], max_steps: int, seed: int):
        if not benchmark.spec.offline_playable:
            raise BenchmarkError(
                f"the offline model cannot play {benchmark.name}; it needs an LLM "
                "(pass --model, e.g. --model openai/gpt-4o-mini)"
            )
        self.benchmark = cast(InteractiveBenchmark, benchmark)
        self.skills = skills
        self.rules = parse_rules(skills)
        self.max_steps = max_steps
        self.seed = seed

    @classmethod
    def from_parts(cls, parts: AgentParts) -> OfflineAgent:
        """The agent of the offline model, seeded by `parts.seed`, else the settings' `seed`."""
        config = parts.config
        seed = config.seed if parts.seed is None else parts.seed
        return cls(parts.benchmark, parts.skills, config.agent.max_steps, seed)

    async def run(self, task: Task) -> Trajectory:
        return await asyncio.to_thread(self.play, task)

    def play(self, task: Task) -> Trajectory:
        rng = random.Random(f"{self.seed}:{task.id}")
        env = self.benchmark.make_env(task)
        try:
            state = env.reset()
            room = _room(state.observation) or "start"
            tried: set[tuple[str, str]] = set()
            steps: list[TraceStep] = []
            for _ in range(self.max_steps):
                action, why = self.choose(state, room, tried, rng)
                tried.add((room, action))
                state = env.step(action)
                room = _room(state.observation) or room
                steps.append(TraceStep(action=action, observation=state.observation, score=state.score, note=why))
                if state.done:
                    break
        finally:
            env.close()
        return Trajectory(
            task_id=task.id,
            split=task.split,
            kind=BenchmarkKind.INTERACTIVE,
            question=task.question,
            steps=steps,
            score=normalized_score(state),
            won=state.won,
            lost=state.lost,
            skills=[s.name for s in self.skills],
        )

    def choose(
        self, state: EnvStep, room: str, tried: set[tuple[str, str]], rng: random.Random
    ) -> tuple[str, str | None]:
        """The next action and, when a skill decided it, which rule did."""
        options = sorted(set(state.admissible_actions or LAST_RESORT))
        avoided = [rule for rule in self.rules if rule.kind == "avoid"]
        allowed = [a for a in options if not any(rule.matches(a) for rule in avoided)] or options
        for rule in (r for r in self.rules if r.kind == "prefer"):
            hits = [a for a in allowed if rule.matches(a) and (room, a) not in tried]
            if hits:
                return hits[0], _because(rule)
        untried = [a for a in allowed if (room, a) not in tried and a not in LAST_RESORT]
        if untried:
            return rng.choice(untried), None
        moves = [a for a in allowed if a.startswith("go ")]
        return rng.choice(moves or allowed), "every action here was tried"


def _because(rule: Rule) -> str:
    return f"skill {rule.skill}: {rule.kind} `{rule.pattern}`"


def _room(observation: str) -> str | None:
    match = _ROOM.search(observation)
    return match.group(1).lower() if match else None
