"""What a task-agent runner must do (`agent.runner`; `core/parts.py` TASK_RUNNER): a kind of
runner claims the `agent.runner` values it takes (`builtin`, `python:MODULE:FUNCTION`, a CLI
preset's name, `oracle`), says which suites it plays, checks before a run that it can start,
makes the task agent's class, and declares what of it decides a score (its settings and its code,
by module) and whether skills reach it in its prompt (the estimate) or as files it reads (uplift's
loads). Nothing outside a runner's own module asks for a runner by its name: it asks `runner_of`
and reads the answer's declarations."""

from __future__ import annotations

from typing import ClassVar, Protocol

from ..benchmarks import Benchmark, BenchmarkKind
from ..benchmarks.base import BenchmarkSpec
from ..core.config import Config
from ..core.errors import ConfigError
from ..core.parts import TASK_RUNNER
from ..core.registry import Registry
from ..roles.settings import AgentSettings, runner_kind
from ..store.settings import a_kind
from ..store.trailers import SkillLoading
from .roles import Player

SUITE_WORDS = {BenchmarkKind.QA: "QA suites", BenchmarkKind.WORKDIR: "task folders"}
"""How a message names the suites of a kind that are not called `<kind> suites`."""


class TaskRunner(Protocol):
    """A kind of task-agent runner. `claim` and `described` are read when wikiskill.yaml is (an
    unknown runner is refused naming every kind's `described`); the rest when a command runs."""

    plays: ClassVar[frozenset[BenchmarkKind]]
    """The kinds of suite it plays; another kind is refused before a run (`check_suite`)."""
    prompts_skills: ClassVar[bool]
    """The skills are in its prompt (the estimate counts their tokens in every call)."""
    reads_skill_files: ClassVar[bool]
    """It reads the skills as files, so uplift counts the tasks that loaded each one."""
    calls_model_from_container: ClassVar[bool]
    """On a suite of containers it calls its model from inside each task's container (the
    pre-flight checks that the model is reachable from there)."""

    @classmethod
    def claim(cls, value: str) -> str | None:
        """`value` as this runner's canonical `agent.runner` (a name in its case), None when it is not one."""
        ...

    @classmethod
    def described(cls) -> str:
        """The values it takes, as the message for an unknown runner lists them."""
        ...

    @classmethod
    def own_settings(cls, value: str) -> frozenset[str]:
        """The `agent.*` settings that only the runner `value` reads (`kind`, `sandbox`, `command`):
        `init` writes them for it and takes `--command` only for a runner that reads `command`, and
        `agent.kind` set for a runner that does not read it is refused."""
        ...

    @classmethod
    def check_settings(cls, agent: AgentSettings) -> None:
        """A ValueError when the agent's settings cannot go with it (read with wikiskill.yaml)."""
        ...

    @classmethod
    def check_suite(cls, config: Config, spec: BenchmarkSpec, source: str) -> None:
        """A ConfigError of one line when it cannot play the suite `spec` describes; `source` names
        where `agent.runner` came from."""
        ...

    @classmethod
    def check(cls, config: Config) -> None:
        """A ConfigError of one line when it cannot start (its program or callable missing)."""
        ...

    @classmethod
    def player(cls, config: Config, benchmark: Benchmark) -> type[Player]:
        """The class whose `from_parts` makes the task agent for `benchmark`."""
        ...

    @classmethod
    def fingerprint(cls, agent: AgentSettings, settings: dict[str, object]) -> dict[str, object]:
        """The agent's `settings` that decide a score (`loop/fingerprint.py` AGENT_SETTINGS), as
        this runner records them: with what of it decides a score besides its code."""
        ...

    @classmethod
    def code(cls, agent: AgentSettings) -> tuple[str, ...]:
        """Its own modules (`roles.agent`, relative to the package): the fingerprint hashes them
        with every wikiskill module they import, as its code."""
        ...


class BaseRunner:
    """What a runner declares unless it says otherwise: it plays QA suites and task folders, reads
    no setting of its own, gets the skills neither in its prompt nor as files it reads, calls no
    model from a container, checks nothing beyond the suite, records its settings as they are and
    has no code of wikiskill's. A plugin runner may subclass it; the registry gives a class that
    does not these defaults."""

    plays: ClassVar[frozenset[BenchmarkKind]] = frozenset({BenchmarkKind.QA, BenchmarkKind.WORKDIR})
    prompts_skills: ClassVar[bool] = False
    reads_skill_files: ClassVar[bool] = False
    calls_model_from_container: ClassVar[bool] = False

    @classmethod
    def own_settings(cls, value: str) -> frozenset[str]:
        return frozenset()

    @classmethod
    def check_settings(cls, agent: AgentSettings) -> None:
        return None

    @classmethod
    def check_suite(cls, config: Config, spec: BenchmarkSpec, source: str) -> None:
        if spec.kind not in cls.plays:
            played = " and ".join(
                SUITE_WORDS.get(kind, f"{kind} suites") for kind in BenchmarkKind if kind in cls.plays
            )
            raise ConfigError(
                f"{source}: agent.runner: {config.agent.runner} plays {played} only; "
                f"{config.benchmark} is {a_kind(spec.kind)} suite (use runner: {TASK_RUNNER.default})"
            )

    @classmethod
    def check(cls, config: Config) -> None:
        return None

    @classmethod
    def fingerprint(cls, agent: AgentSettings, settings: dict[str, object]) -> dict[str, object]:
        return settings

    @classmethod
    def code(cls, agent: AgentSettings) -> tuple[str, ...]:
        return ()


TASK_RUNNERS = Registry(TASK_RUNNER, TaskRunner, defaults=BaseRunner)


def runner_named(value: str) -> type[TaskRunner]:
    """The kind of runner the `agent.runner` value `value` is; ValueError when it is none."""
    return TASK_RUNNERS.load(runner_kind(value))


def runner_of(agent: AgentSettings) -> type[TaskRunner]:
    """The kind of runner `agent.runner` is (checked when the settings were read)."""
    return runner_named(agent.runner)


def skill_loading(agent: AgentSettings) -> SkillLoading:
    """How `agent.runner`'s task agent comes to a skill: on demand when it reads them as files,
    always when they are in its prompt, else unseen."""
    runner = runner_of(agent)
    if runner.reads_skill_files:
        return SkillLoading.ON_DEMAND
    return SkillLoading.ALWAYS if runner.prompts_skills else SkillLoading.UNSEEN
