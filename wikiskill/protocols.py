"""What each replaceable part of wikiskill must do, in one place: the task agent, the wiki
maintainer, the skill proposer, the workdir agent and its scorer, the team that builds them, the
executor that runs tasks and the gate policy that judges a candidate; with the values they hand
each other (`AgentRecipe`, `Place`, `Verdict`, `Evidence`).

The protocols of the benchmark kinds (`Benchmark`, `QABenchmark`, `InteractiveBenchmark`,
`ToolUseBenchmark`, `TextEnv`, `ToolSession`) are stated in `benchmarks/base.py`, because the
suites and their registry live in a layer below this one; the model a role talks to is
`llm.chat.ChatModel`.

Executors and gate policies are chosen by name in wikiskill.yaml (`executor`, `gate.policy`): a
built-in name or the dotted path of a class of your own (`package.module:Class`); see
`run/executors/__init__.py` and `loop/gate_policies.py` for the registries.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

from .benchmarks import Task
from .core.config import Config, GateSettings
from .environments.base import TaskEnvironment
from .knowledge.skills import Skill
from .knowledge.wiki_requests import WikiView
from .llm.meter import Meter
from .roles.maintainer import Check, MaintainerResult
from .roles.proposer import Library, ProposerResult
from .roles.wikitool import WikiShelf
from .store.evaluations import Evaluation
from .store.results import ResultCache
from .store.traces import Score, Trajectory
from .store.trailers import Crossed, Decision

# ---- the roles ---------------------------------------------------------------------------------

class TaskAgent(Protocol):
    """Plays one task with the skills it was built with (`roles/agent.py`, `roles/tool_agent.py`,
    `roles/offline/agent.py`)."""

    async def run(self, task: Task) -> Trajectory:
        """The whole episode as a trajectory with its score. A failure of the task itself (a
        conversation that cannot fit the context window) is the trajectory's `error`; an
        exception stops the command (no new task starts)."""


class WorkdirAgent(Protocol):
    """Plays one task of a workdir suite in a working directory made for it (`roles/shell_agent.py`);
    the caller copies the task's files in, scores the work with the suite's scorer and cleans up."""

    async def play(self, task: Task, workdir: Path) -> Trajectory:
        """The episode as an unscored trajectory: the final answer as its prediction, the messages,
        the usage, and the error of a task that failed."""


class EnvironmentAgent(Protocol):
    """Plays one task of a Harbor suite inside the task's environment, its container
    (`roles/shell_agent.py`, `roles/python_agent.py`, `roles/reference_agent.py`); the caller
    starts the container, verifies the work after it and removes the container."""

    async def play_in(self, task: Task, environment: TaskEnvironment) -> Trajectory:
        """The episode as an unscored trajectory, its commands run in `environment`."""


class Scorer(Protocol):
    """Scores a workdir task's work where it was done (`run/scorers.py`: `command`, `python:`;
    `roles/judge.py`: `judge`). It may block (it runs in a thread). An exception is the scorer
    crashing, an infrastructure failure (the task is retried once, then left out of the score);
    a `run/scorers.ScorerTimeout` is the task's own timeout failure."""

    def score(self, task: Task, trajectory: Trajectory, workdir: Path) -> Score:
        """The value in [0, 1] with written feedback, from the finished `workdir` and the
        unscored `trajectory` (its final answer is `prediction`)."""


class WikiMaintainer(Protocol):
    """Turns a round's sampled traces into page edits (`roles/maintainer.py`,
    `roles/offline/maintainer.py`); it returns them and writes nothing."""

    def run(self, round_number: int, wiki: WikiView, traces: list[Trajectory], train_score: float,
            passed: int, total: int, max_chars: int, check: Check = ...) -> MaintainerResult:
        """The page edits (`MaintainerOutput`) or the error, the usage and the transcript.
        `wiki` is the part of the wiki it is shown, each trace is cut to `max_chars`, and `check`
        gives the reasons the caller would refuse an output's pages (worth one retry)."""


class SkillProposer(Protocol):
    """Reads the wiki and traces through its `Library` and proposes one skill change
    (`roles/proposer.py`, `roles/offline/proposer.py`); the harness validates and applies it."""

    def run(self, context: dict) -> ProposerResult:
        """The raw proposal (a dict the proposal model parses) or the error, with the reads, the
        usage and the transcript. `context` fills prompts/proposer_user.j2."""


class Roles(Protocol):
    """Builds the roles from the config (`run/team.py`)."""

    def agent(self, skills: list[Skill], seed: int | None = None, shelf: WikiShelf | None = None) -> TaskAgent:
        """The task agent with `skills`; `seed` (default: the config's) for agents that use one;
        `shelf`: the wiki it may read (`agent.wiki_access`)."""

    def maintainer(self) -> WikiMaintainer: ...

    def proposer(self, library: Library) -> SkillProposer: ...


# ---- running tasks -----------------------------------------------------------------------------

@dataclass(frozen=True)
class AgentRecipe:
    """Everything a worker needs to build the task agent of one step: the config (which names the
    benchmark, so a worker loads or regenerates it), the skills' content, the seed and the wiki."""

    config: Config
    skills: tuple[Skill, ...]
    seed: int | None = None
    shelf: WikiShelf | None = None
    key: str = field(default_factory=lambda: uuid.uuid4().hex)
    """Tells recipes apart, so a worker builds each one's agent once."""


@dataclass(frozen=True)
class Place:
    """Where a worker finds the workspace's relative paths (`root`) and keeps its model-response
    cache (`state_dir`): the command's own folders for workers on this machine; None on a cluster
    node (the shipped working directory, and a folder of the worker's own)."""

    root: Path | None = None
    state_dir: Path | None = None


class Executor(Protocol):
    """Where a command's tasks run (config `executor`; `run/executors/`). Whatever the kind, the
    command owns the results: it answers cached tasks itself, starts a task only while the budget
    allows, writes each result to the cache as it arrives and keeps the cost ledger."""

    @classmethod
    def open(cls, config: Config, place: Place, team: Roles) -> Executor:
        """An executor for `config.workers` workers, started on first use. Workers on this
        machine use `place`; `team` builds agents in this process (a host's model factory
        cannot cross processes)."""

    def run(self, recipe: AgentRecipe, tasks: list[Task], concurrency: int, meter: Meter,
            cache: ResultCache | None = None, on_done: Callable[[Trajectory], None] | None = None) -> list[Trajectory]:
        """Each task at most once, results in task order. The budget is checked before a task
        starts; once it is reached or a task fails, no new task starts, the tasks in flight finish
        (and are cached), and the first error is raised."""

    def close(self) -> None:
        """End the workers this executor started; it may not be used again."""


# ---- the gate ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Look:
    """One look of a sequential validation: the first `tasks` of a `pool` of validation tasks,
    taken `batch` at a time, and where the gain's statistic stands against the look's boundaries."""

    number: int
    looks: int
    """How many looks the pool allows."""
    tasks: int
    pool: int
    batch: int
    confidence: float
    margin: float
    """The settings (`gate.confidence`, `gate.margin`) the boundaries were built for."""
    statistic: float
    """The standardised gain: the sum of the per-task differences (less the margin) over the
    square root of the sum of their squares."""
    upper: float
    """Accept at or above it."""
    lower: float | None
    """Reject below it (none at the last look, which gives `paired`'s verdict)."""
    crossed: Crossed | None = None
    """What ended the validation here; None: the next batch runs."""

    @property
    def boundary(self) -> float:
        """The boundary crossed (the upper one while it continues)."""
        return self.lower if self.crossed is Crossed.FUTILITY and self.lower is not None else self.upper

    def text(self) -> str:
        where = f"look {self.number} of {self.looks}, {self.tasks} of {self.pool} tasks"
        if self.crossed is Crossed.EFFICACY:
            return f"{where}: z {self.statistic:.3f} >= efficacy bound {self.upper:.3f}"
        if self.crossed is Crossed.FUTILITY:
            return f"{where}: z {self.statistic:.3f} < futility bound {self.boundary:.3f}"
        if self.crossed is Crossed.POOL_END:
            return f"{where}: pool used up (z {self.statistic:.3f}, final bound {self.upper:.3f})"
        return f"{where}: z {self.statistic:.3f} inside [{self.lower or 0:.3f}, {self.upper:.3f}), continue"


@dataclass(frozen=True)
class Evidence:
    """What a verdict rests on; written to the gate commit and the skill-impact entry."""

    policy: str
    n: int
    candidate: float
    incumbent: float
    gain: Fraction
    """The exact mean per-task difference, candidate minus incumbent."""
    fixed: list[str] = field(default_factory=list)
    """Tasks the candidate solves that the incumbent did not."""
    broken: list[str] = field(default_factory=list)
    """Tasks the incumbent solved that the candidate does not."""
    helped: list[str] = field(default_factory=list)
    """Tasks the candidate scores higher on (the `fixed` ones among them)."""
    hurt: list[str] = field(default_factory=list)
    """Tasks the candidate scores lower on (the `broken` ones among them)."""
    interval: tuple[float, float] | None = None
    """One-sided confidence interval of the mean per-task difference (upper end +inf)."""
    confidence: float | None = None
    p_value: float | None = None
    look: Look | None = None
    """`sequential`: the look that ended the validation and the boundary it crossed."""
    left_out: dict[str, str] = field(default_factory=dict)
    """Tasks left out on both sides because the machinery failed on one, with the reason."""

    @property
    def mean_diff(self) -> float:
        return float(self.gain)

    def effect(self) -> str:
        """What the change did to the val tasks, in the one wording skill-impact.md and PURPOSE.md share."""
        return (f"helped {len(self.helped)} val task(s) ({len(self.fixed)} newly solved), "
                f"hurt {len(self.hurt)} ({len(self.broken)} no longer solved)")

    def interval_text(self) -> str | None:
        if self.interval is None:
            return None
        return f"[{self.interval[0]:+.4f}, +inf) at {self.confidence:g}"


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    """`ACCEPTED` or `REJECTED`."""
    reason: str
    """One line for the gate commit and `wikiskill show`."""
    evidence: Evidence


class GatePolicy(Protocol):
    """How much evidence a candidate's validation must show to be merged (config `gate.policy`;
    `loop/gate_policies.py`). Both evaluations cover the same tasks under the same setup and
    differ in the skills alone."""

    name: ClassVar[str]
    """Recorded as the gate commit's `policy` trailer."""
    confirms: ClassVar[bool]
    """Whether a candidate that passes is evaluated once more, with fresh seeds, and must pass again."""

    @classmethod
    def from_settings(cls, settings: GateSettings) -> GatePolicy:
        """The policy configured by the `gate` section (`confidence`, `margin`, `max_broken`, `seed`)."""

    def judge(self, candidate: Evaluation, incumbent: Evaluation, at_least: bool = False) -> Verdict:
        """Accept or reject the candidate against the incumbent. `at_least`: a tie passes too
        (a change that only removes prompt text)."""


@runtime_checkable
class BatchedGatePolicy(GatePolicy, Protocol):
    """A policy that validates in batches and may stop before the val split's end
    (`sequential`): the validate step runs `batch` more tasks of both candidate and incumbent,
    records the look, and asks `look` whether to stop, until it does."""

    batch: int

    def counts(self, pool: int) -> tuple[int, ...]:
        """The tasks used at each look of a pool: `batch`, `2 * batch`, ..., `pool`."""

    def look(self, candidate: Evaluation, incumbent: Evaluation, pool: int, at_least: bool = False) -> Look:
        """Where the tasks so far (the first of the pool, in its order, at one of its looks)
        stand; `crossed` says whether the validation stops here. A pure function of the per-task
        differences and the look, so `audit` recomputes it."""

    def judge_looks(self, candidate: Evaluation, incumbent: Evaluation, pool: int,
                    at_least: bool = False) -> Verdict:
        """Replay every look on the tasks given, in order: the verdict of the first that stops
        (the validate step never runs past it); at the pool's end, `paired`'s."""
