"""The user's own Python callable as the task agent (`agent.runner: python:MODULE:FUNCTION`, or
`python:NAME` for a callable registered under the `wikiskill.agents` entry-point group;
`roles/python_agent.py` calls it)."""

from __future__ import annotations

from typing import ClassVar

from ...benchmarks import Benchmark
from ...contracts.roles import Player
from ...contracts.runners import BaseRunner
from ...core.config import Config
from ...core.parts import TASK_RUNNER
from ..python_agent import PYTHON_RUNNER, PythonAgent, load_runner, runner_code
from ..settings import AgentSettings


@TASK_RUNNER.builtin
class PythonRunner(BaseRunner):
    """Your own callable, given each task, the skills and the model settings; it returns the answer."""

    name: ClassVar[str]

    @classmethod
    def claim(cls, value: str) -> str | None:
        return value if PYTHON_RUNNER.fullmatch(value) else None

    @classmethod
    def described(cls) -> str:
        return "python:MODULE:FUNCTION, python:NAME"

    @classmethod
    def check(cls, config: Config) -> None:
        load_runner(config.agent.runner)

    @classmethod
    def player(cls, config: Config, benchmark: Benchmark) -> type[Player]:
        return PythonAgent

    @classmethod
    def fingerprint(cls, agent: AgentSettings, settings: dict[str, object]) -> dict[str, object]:
        """With a digest of the callable's module, so an edit to the user's agent is a new setup."""
        return {**settings, "runner_code": runner_code(agent.runner)}

    @classmethod
    def code(cls, agent: AgentSettings) -> tuple[str, ...]:
        return ("roles.python_agent",)
