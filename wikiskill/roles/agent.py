"""The task agent: solves one task with the active skills in its system prompt.

Kinds: `qa` (one answer in <answer></answer>) and `interactive` (one action per turn in a text
environment). In skills mode `index` both can call `load_skill(name)` to read a skill's body; with
`agent.wiki_access` both can call `read_wiki(name)` to read a wiki page. A task whose
conversation cannot fit the model's context window fails alone, with the reason as its error.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from ..benchmarks import BenchmarkKind, EnvStep, InteractiveBenchmark, QABenchmark, Task, TextEnv, normalized_score
from ..contracts.roles import AgentParts
from ..core.errors import ContextOverflow
from ..core.parts import TASK_AGENT
from ..core.prompts import render
from ..knowledge.settings import SkillsMode, SkillsSettings
from ..knowledge.shelf import WikiShelf
from ..knowledge.skills import Skill
from ..knowledge.skillsblock import LOAD_SKILL_TOOL, LOAD_SKILL_TOOL_NAME, load_skill, render_block, shown_skills
from ..llm.chat import ChatModel, Message, Reply
from ..store.traces import TraceStep, Trajectory, Usage
from .wikitool import READ_WIKI_TOOL, READ_WIKI_TOOL_NAME

MAX_SKILL_LOADS = 5
HISTORY_TURNS = 12


def last_tagged(text: str, tag: str) -> str | None:
    """The text of the last <tag>...</tag> (case-insensitive), in linear time even on hostile replies."""
    lower = text.lower()
    end = lower.rfind(f"</{tag}>")
    start = lower.rfind(f"<{tag}>", 0, end) if end != -1 else -1
    return text[start + len(tag) + 2 : end] if start != -1 else None


def extract_answer(text: str | None) -> str | None:
    answer = last_tagged(text, "answer") if text else None
    return answer.strip() if answer is not None else None


def final_answer(text: str | None) -> str | None:
    """An agent's final message as its answer: the last `<answer>` tags' content when it has
    them, else the whole message, stripped."""
    if text and "</answer>" in text.lower():
        return extract_answer(text)
    return text.strip() if text is not None else None


def ending_with(messages: list[Message], text: str | None) -> list[Message]:
    """`messages` with the final message `text` appended as the assistant's, unless it is there."""
    if text is None or any(m.get("role") == "assistant" and m.get("content") == text for m in messages):
        return [*messages]
    return [*messages, {"role": "assistant", "content": text}]


def extract_action(text: str | None) -> str:
    """The action in <action></action>, else the reply's last non-empty line."""
    if not text:
        return ""
    action = last_tagged(text, "action")
    if action is not None:
        return " ".join(action.split())
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " ".join(lines[-1].split()) if lines else ""


class LookupTools:
    """The tools the agent's own side answers: `load_skill` (skills mode `index`) and `read_wiki`
    (with `agent.wiki_access`)."""

    def __init__(self, skills: list[Skill], settings: SkillsSettings, shelf: WikiShelf | None = None):
        self.skills = skills
        self.shelf = shelf
        self.tools = ([LOAD_SKILL_TOOL] if settings.mode is SkillsMode.INDEX and skills else []) + (
            [READ_WIKI_TOOL] if shelf else []
        )
        self.names = {tool["function"]["name"] for tool in self.tools}

    def answer(self, tool: str, arguments: dict[str, Any] | None) -> str:
        name = str((arguments or {}).get("name", ""))
        if tool == LOAD_SKILL_TOOL_NAME and tool in self.names:
            return load_skill(self.skills, name)
        if tool == READ_WIKI_TOOL_NAME and self.shelf is not None:
            return self.shelf.read(name)
        return f"Unknown tool {tool!r}."


class _SkillfulChat:
    """A conversation that resolves `load_skill` (and `read_wiki`) tool calls before returning a
    text reply."""

    def __init__(self, model: ChatModel, skills: list[Skill], settings: SkillsSettings, shelf: WikiShelf | None = None):
        self.model = model
        self.lookups = LookupTools(skills, settings, shelf)
        self.tools = self.lookups.tools or None
        self.usage = Usage()

    async def reply(self, messages: list[Message]) -> Reply:
        for _ in range(MAX_SKILL_LOADS + 1):
            reply = await self.model.acomplete(messages, self.tools)
            self.usage = self.usage + reply.usage
            messages.append(reply.message())
            if not reply.tool_calls:
                return reply
            for call in reply.tool_calls:
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": self.lookups.answer(call.name, call.arguments)}
                )
        return reply


@TASK_AGENT.builtin
class QAAgent:
    name: str
    plays = BenchmarkKind.QA

    @classmethod
    def from_parts(cls, parts: AgentParts) -> QAAgent:
        benchmark = cast(QABenchmark, parts.benchmark)
        return cls(parts.model, benchmark, parts.skills, parts.config.skills, parts.shelf)

    def __init__(
        self,
        model: ChatModel,
        benchmark: QABenchmark,
        skills: list[Skill],
        settings: SkillsSettings,
        shelf: WikiShelf | None = None,
    ):
        self.model = model
        self.benchmark = benchmark
        self.skills = skills
        self.settings = settings
        self.shelf = shelf

    async def run(self, task: Task) -> Trajectory:
        shown = shown_skills(self.skills, self.settings, task.question)
        block = render_block(shown, self.settings)
        messages = [
            {"role": "system", "content": render("agent_qa", skills_block=block)},
            {"role": "user", "content": task.question},
        ]
        chat = _SkillfulChat(self.model, self.skills, self.settings, self.shelf)
        error: str | None
        try:
            reply = await chat.reply(messages)
        except ContextOverflow as exc:
            prediction, error = None, str(exc)
        else:
            prediction = extract_answer(reply.content)
            error = None if prediction is not None else "no <answer></answer> in the reply"
        return Trajectory(
            task_id=task.id,
            split=task.split,
            kind=BenchmarkKind.QA,
            question=task.question,
            messages=messages,
            prediction=prediction,
            expected=task.answer,
            score=self.benchmark.score(task, prediction),
            usage=chat.usage,
            skills=[s.name for s in shown],
            error=error,
        )


@TASK_AGENT.builtin
class InteractiveAgent:
    """An LLM playing a text environment; the environment runs off the event loop."""

    name: str
    plays = BenchmarkKind.INTERACTIVE

    @classmethod
    def from_parts(cls, parts: AgentParts) -> InteractiveAgent:
        benchmark = cast(InteractiveBenchmark, parts.benchmark)
        settings = parts.config
        return cls(parts.model, benchmark, parts.skills, settings.skills, settings.agent.max_steps, parts.shelf)

    def __init__(
        self,
        model: ChatModel,
        benchmark: InteractiveBenchmark,
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
        self.shelf = shelf

    async def run(self, task: Task) -> Trajectory:
        env = await asyncio.to_thread(self.benchmark.make_env, task)
        try:
            return await self._play(task, env)
        finally:
            await asyncio.to_thread(env.close)

    async def _play(self, task: Task, env: TextEnv) -> Trajectory:
        shown = shown_skills(self.skills, self.settings, task.question)
        block = render_block(shown, self.settings)
        system = {"role": "system", "content": render("agent_interactive", skills_block=block)}
        chat = _SkillfulChat(self.model, self.skills, self.settings, self.shelf)
        state: EnvStep = await asyncio.to_thread(env.reset)
        steps: list[TraceStep] = []
        turns: list[Message] = []
        feedback = ""
        tried: set[str] = set()
        error = None
        for number in range(1, self.max_steps + 1):
            turns.append(
                {
                    "role": "user",
                    "content": render(
                        "agent_interactive_turn",
                        first=number == 1,
                        objective=task.question,
                        feedback=feedback,
                        observation=state.observation,
                        score=state.score,
                        max_score=state.max_score,
                        step=number,
                        max_steps=self.max_steps,
                        admissible=state.admissible_actions or [],
                    ),
                }
            )
            window = [system] + turns[-2 * HISTORY_TURNS :]
            try:
                reply = await chat.reply(window)
            except ContextOverflow as exc:
                error = str(exc)
                break
            turns.append({"role": "assistant", "content": reply.content or ""})
            action = extract_action(reply.content)
            feedback = _feedback(action, state, tried)
            state = await asyncio.to_thread(env.step, action or "look")
            tried.add(action)
            steps.append(
                TraceStep(action=action, observation=state.observation, score=state.score, note=feedback or None)
            )
            if state.done:
                break
        return Trajectory(
            task_id=task.id,
            split=task.split,
            kind=BenchmarkKind.INTERACTIVE,
            question=task.question,
            steps=steps,
            score=normalized_score(state),
            won=state.won,
            lost=state.lost,
            usage=chat.usage,
            skills=[s.name for s in shown],
            error=error,
        )


def _feedback(action: str, state: EnvStep, tried: set[str]) -> str:
    """What the harness tells the agent about an invalid or repeated action."""
    if not action:
        return "Your reply had no action; `look` was sent instead. Put one action in <action></action>."
    if state.admissible_actions is not None and action not in state.admissible_actions:
        return f"`{action}` was not among the admissible actions."
    if action in tried:
        return f"You already tried `{action}`; repeating actions rarely helps."
    return ""
