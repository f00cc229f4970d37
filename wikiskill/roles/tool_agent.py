"""The tool-use agent: serves a multi-turn user conversation by calling a task's simulated APIs.

Each user turn runs until the model replies without a function call, for at most `max_steps`
replies. The task's functions are offered as tools (native tool calls, or the text protocol for
models without them: the model layer chooses), next to `load_skill` and `read_wiki` where those
are on. Every call and its result stays in the trajectory's messages, for the maintainer and the
proposer to read. A conversation that cannot fit the model's context window ends there: the
task fails with the reason as its error, and the other tasks run on.
"""

from __future__ import annotations

import asyncio
from typing import cast

from ..benchmarks import BenchmarkKind, FunctionCall, Task, ToolSession, ToolUseBenchmark
from ..contracts.roles import AgentParts
from ..core.errors import ContextOverflow
from ..core.parts import TASK_AGENT
from ..core.prompts import render
from ..knowledge.settings import SkillsSettings
from ..knowledge.shelf import WikiShelf
from ..knowledge.skills import Skill
from ..knowledge.skillsblock import render_block, shown_skills
from ..llm.chat import ChatModel, Message, ToolCall
from ..store.traces import Trajectory, Usage
from ..telemetry.spans import tool_call_span
from .agent import LookupTools


@TASK_AGENT.builtin
class ToolUseAgent:
    name: str
    plays = BenchmarkKind.TOOL_USE

    @classmethod
    def from_parts(cls, parts: AgentParts) -> ToolUseAgent:
        benchmark = cast(ToolUseBenchmark, parts.benchmark)
        settings = parts.config
        return cls(parts.model, benchmark, parts.skills, settings.skills, settings.agent.max_steps, parts.shelf)

    def __init__(
        self,
        model: ChatModel,
        benchmark: ToolUseBenchmark,
        skills: list[Skill],
        settings: SkillsSettings,
        max_steps: int,
        shelf: WikiShelf | None = None,
    ):
        self.model = model
        self.benchmark = benchmark
        self.skills = skills
        self.settings = settings
        self.max_steps = max_steps
        self.lookups = LookupTools(skills, settings, shelf)

    async def run(self, task: Task) -> Trajectory:
        session = await asyncio.to_thread(self.benchmark.open_session, task)
        try:
            return await self._converse(task, session)
        finally:
            await asyncio.to_thread(session.close)

    async def _converse(self, task: Task, session: ToolSession) -> Trajectory:
        shown = shown_skills(self.skills, self.settings, task.question)
        system = render("agent_tool_use", skills_block=render_block(shown, self.settings))
        messages = [{"role": "system", "content": system}]
        tools = list(session.tools)
        usage = Usage()
        answered, error = 0, None
        for turn, user in enumerate(session.user_turns):
            tools += user.added_tools
            messages.append({"role": "user", "content": user.content})
            for _ in range(self.max_steps):
                try:
                    reply = await self.model.acomplete(messages, tools + self.lookups.tools)
                except ContextOverflow as exc:  # this task fails alone; the others still run
                    error = str(exc)
                    break
                usage = usage + reply.usage
                messages.append(reply.message())
                if not reply.tool_calls:
                    answered += 1
                    break
                messages += await self._results(session, turn, reply.tool_calls)
            else:
                error = f"user turn {turn + 1} was still calling functions after {self.max_steps} replies"
            if error:
                break
        score = await asyncio.to_thread(session.score, answered)
        return Trajectory(
            task_id=task.id,
            split=task.split,
            kind=BenchmarkKind.TOOL_USE,
            question=task.question,
            messages=messages[1:],
            score=score,
            usage=usage,
            skills=[s.name for s in shown],
            error=error,
        )

    async def _results(self, session: ToolSession, turn: int, calls: list[ToolCall]) -> list[Message]:
        """One tool message per call: the task's calls run together as one step, look-ups locally."""
        lookups = self.lookups
        task_calls = [FunctionCall(call.name, call.arguments) for call in calls if call.name not in lookups.names]
        results = iter(await _execute(session, turn, task_calls) if task_calls else [])
        return [
            {
                "role": "tool",
                "tool_call_id": call.id,
                "content": lookups.answer(call.name, call.arguments) if call.name in lookups.names else next(results),
            }
            for call in calls
        ]


async def _execute(session: ToolSession, turn: int, calls: list[FunctionCall]) -> list[str]:
    """One turn's task calls, run together: one tool span names them all."""
    with tool_call_span(",".join(call.name for call in calls)):
        return await asyncio.to_thread(session.execute, turn, calls)
