"""The user's own Python agent as the task agent (`agent.runner: python:MODULE:FUNCTION`).

The callable gets one `AgentRun` and returns the final answer as a string, or an object with
`answer`, `messages` and `usage` (an `AgentResult`, or anything with those attributes or keys).
Each task gets a fresh working directory and its own copy of the skills as Agent Skills folders,
both removed afterwards, so one task never sees another's files. The answer is scored as the
built-in QA agent's is (`<answer>` tags honoured when present); on a workdir suite the working
directory holds the task's files and the suite's scorer checks what the callable left there. An
exception raised by the callable fails that task alone, with its one-line reason as the
trajectory's error.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import cast

from ..benchmarks import Benchmark, BenchmarkKind, QABenchmark, Task
from ..contracts.roles import AgentParts
from ..core.errors import ConfigError
from ..core.registry import import_object
from ..environments.base import TaskEnvironment
from ..knowledge.settings import SkillsSettings
from ..knowledge.skills import Skill, write_skill_folders
from ..knowledge.skillsblock import render_block, shown_skills
from ..llm.chat import Message
from ..store.traces import Trajectory, Usage
from .agent import ending_with, final_answer
from .settings import Role, RoleSettings

ENTRY_POINT_GROUP = "wikiskill.agents"


@dataclass(frozen=True)
class AgentRun:
    """What the callable is given for one task."""

    task: str
    """The task's text (the question)."""
    task_id: str
    skills_prompt: str
    """The skills block for `skills.mode`, as the built-in agent puts it in its system prompt."""
    skills_dir: Path
    """A folder of Agent Skills folders (`<name>/SKILL.md`), copied from the skills evaluated."""
    workdir: Path
    """A directory of this task's own, removed after it: empty on a QA suite; on a workdir suite
    it holds the task's files, and what the callable leaves there is scored."""
    model: str | None
    api_base: str | None
    temperature: float
    max_tokens: int | None
    environment: TaskEnvironment | None = None
    """On a Harbor suite, the task's container: `await environment.run(command, timeout_s,
    output_chars)` runs a command in its workdir, `copy_in` and `copy_out` move files; None
    elsewhere."""


@dataclass(frozen=True)
class AgentResult:
    """What the callable may return instead of a bare answer."""

    answer: str | None
    messages: list[Message] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


PYTHON_RUNNER = re.compile(r"python:(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?::(?P<function>[A-Za-z_]\w*))?")
"""`python:MODULE:FUNCTION`, or `python:NAME` for a name in the `wikiskill.agents` entry-point group."""

Runner = Callable[[AgentRun], object]
"""The user's agent: called with an `AgentRun`, it returns (or awaits to) an answer, an
`AgentResult` or an object or dict with their fields."""


def load_runner(spec: str) -> Runner:
    """The callable `spec` names; a ConfigError of one line when it cannot be found."""
    match = PYTHON_RUNNER.fullmatch(spec)
    if match is None:
        raise ConfigError(f"agent.runner: {spec!r} is not python:MODULE:FUNCTION or python:NAME")
    module_name, function = match["module"], match["function"]
    try:
        if function is None:
            found = [point for point in entry_points(group=ENTRY_POINT_GROUP) if point.name == module_name]
            if not found:
                raise ImportError(f"no {module_name!r} in the {ENTRY_POINT_GROUP} entry points")
            target = found[0].load()
        else:
            target = import_object(f"{module_name}:{function}")
    except Exception as exc:  # noqa: BLE001 - the user's import may raise anything
        raise ConfigError(f"agent.runner: cannot load {spec}: {_one_line(exc)}") from exc
    if not callable(target):
        raise ConfigError(f"agent.runner: {spec} is not callable")
    runner: Runner = target
    return runner


def runner_code(spec: str) -> str:
    """A digest of this module's and the callable's module source, for the evaluation fingerprint:
    an edit to the user's agent is a new setup."""
    target = load_runner(spec)
    module = sys.modules.get(getattr(target, "__module__", "") or "")
    try:
        source = inspect.getsource(module) if module is not None else ""
    except (OSError, TypeError):
        source = ""
    return _source_digest(source)


@cache
def _own_source() -> str:
    return Path(__file__).read_text(encoding="utf-8")


def _source_digest(source: str) -> str:
    return hashlib.sha256((_own_source() + "\0" + source).encode()).hexdigest()[:24]


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _result(value: object) -> AgentResult:
    if value is None or isinstance(value, str):
        return AgentResult(value)
    if isinstance(value, AgentResult):
        return value
    get = value.get if isinstance(value, dict) else lambda name, default=None: getattr(value, name, default)
    usage = get("usage", None) or Usage()
    if isinstance(usage, dict):
        usage = Usage.model_validate(usage)
    return AgentResult(get("answer", None), list(get("messages", None) or []), usage)


class PythonAgent:
    """A TaskAgent that calls the user's function once per task (in a thread unless it is async).

    On a workdir suite it is the inner agent (`play`): the caller gives it the task's working
    directory, with the task's files in it, and scores what it leaves there."""

    def __init__(
        self,
        function: Runner,
        benchmark: Benchmark,
        skills: list[Skill],
        settings: SkillsSettings,
        model: RoleSettings,
    ):
        self.function = function
        self.benchmark = benchmark
        self.skills = skills
        self.settings = settings
        self.model = model

    @classmethod
    def from_parts(cls, parts: AgentParts) -> PythonAgent:
        """The callable `agent.runner` names, with the agent's model settings."""
        config = parts.config
        return cls(
            load_runner(config.agent.runner), parts.benchmark, parts.skills, config.skills, config.role(Role.AGENT)
        )

    async def run(self, task: Task) -> Trajectory:
        with tempfile.TemporaryDirectory(prefix="wikiskill-task-") as scratch:
            workdir = Path(scratch) / "work"
            workdir.mkdir()
            trajectory = await self.play(task, workdir)
        score = cast(QABenchmark, self.benchmark).score(task, trajectory.prediction)
        return trajectory.model_copy(update={"score": score})

    async def play_in(self, task: Task, environment: TaskEnvironment) -> Trajectory:
        """The callable's answer on `task` with a handle to its container, unscored (its
        `workdir` is an empty folder of its own on this machine)."""
        with tempfile.TemporaryDirectory(prefix="wikiskill-task-") as scratch:
            workdir = Path(scratch) / "work"
            workdir.mkdir()
            return await self.play(task, workdir, environment)

    async def play(self, task: Task, workdir: Path, environment: TaskEnvironment | None = None) -> Trajectory:
        """The callable's answer on `task` in `workdir`, unscored."""
        shown = shown_skills(self.skills, self.settings, task.question)
        with tempfile.TemporaryDirectory(prefix="wikiskill-skills-") as scratch:
            skills_dir = Path(scratch) / "skills"
            write_skill_folders(self.skills, skills_dir)
            run = AgentRun(
                task=task.question,
                task_id=task.id,
                skills_prompt=render_block(shown, self.settings),
                skills_dir=skills_dir,
                workdir=workdir,
                model=self.model.model,
                api_base=self.model.api_base,
                temperature=self.model.temperature,
                max_tokens=self.model.max_tokens,
                environment=environment,
            )
            error: str | None
            try:
                result = _result(await self._call(run))
            except Exception as exc:  # noqa: BLE001 - the user's agent may raise anything; the task fails alone
                result, error = AgentResult(None), f"the agent raised {_one_line(exc)}"
            else:
                error = None
        prediction = final_answer(result.answer)
        kind = self.benchmark.spec.kind
        if error is None and prediction is None and kind is BenchmarkKind.QA:
            error = "the agent returned no answer"
        return Trajectory(
            task_id=task.id,
            split=task.split,
            kind=kind,
            question=task.question,
            messages=ending_with(result.messages, result.answer),
            prediction=prediction,
            expected=task.answer,
            usage=result.usage,
            skills=[s.name for s in shown],
            error=error,
        )

    async def _call(self, run: AgentRun) -> object:
        if inspect.iscoroutinefunction(self.function):
            return await self.function(run)
        value = await asyncio.to_thread(self.function, run)
        return await value if inspect.isawaitable(value) else value
