"""What each role must do (the task agent, the workdir agent and its scorer, the wiki maintainer,
the skill proposer, the team that builds them) and the values they return (`MaintainerResult`,
`ProposerResult`) or are given (`Library`, `Check`). Roles in `roles/` import the contract they
fulfil from here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from ..benchmarks import Benchmark, BenchmarkKind, Task
from ..core.config import Config
from ..core.parts import REFERENCE_AGENT, TASK_AGENT
from ..core.registry import Registry
from ..environments.base import TaskEnvironment
from ..knowledge.shelf import WikiShelf
from ..knowledge.skills import Skill
from ..knowledge.wiki_requests import MaintainerOutput, WikiView
from ..llm.chat import ChatModel, Message
from ..roles.settings import Role
from ..store.traces import Score, Trajectory, Usage
from ..store.trailers import Parsed
from ..store.uplift_record import SkillValue
from .transcript import Transcript

TurnReport = Callable[[int, Usage], None]
"""Called by a learning role after each model turn: the turn's number (from 1) and the role's
usage so far, so a slow model's progress shows while it works."""
ProposalCheck = Callable[[dict[str, Any], list[Message]], str | None]
"""Why the harness would refuse a proposal that matches the schema before validating it (a
placeholder for a name, a locked skill, a patch of a skill that does not exist), or None, given
the proposal and the prompt the proposer was given: told to the proposer once, so a small model
that copied the example can correct it."""
Check = Callable[[MaintainerOutput, list[str]], list[str]]
"""The reasons pages of an output would be refused (empty when every page passes), given the task
ids of the traces the maintainer was shown."""


@dataclass
class MaintainerResult:
    output: MaintainerOutput | None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    attempts: int = 0
    retry_reasons: list[str] = field(default_factory=list)
    """Why the first reply was sent back (parse error or refused pages), empty without a retry."""
    transcript: Transcript = field(default_factory=lambda: Transcript(role=Role.MAINTAINER))
    shown: list[str] | None = None
    """The task ids of the traces in the prompt; None: all it was given."""
    parsed: Parsed | None = None
    """How its reply was read (None: the role parses nothing, as the offline one)."""
    prompt_budget: int | None = None
    """The prompt tokens it was cut to, when the server's measured speed cut it."""
    budget_note: str | None = None
    """What was cut to fit `prompt_budget`, in a sentence."""


@dataclass
class ProposerResult:
    proposal: dict[str, Any] | None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    reads: list[str] = field(default_factory=list)
    turns: int = 0
    transcript: Transcript = field(default_factory=lambda: Transcript(role=Role.PROPOSER))
    parsed: Parsed | None = None
    """How its proposal was read (None: the role parses nothing, as the offline one)."""


@dataclass(frozen=True)
class WaitingCandidate:
    """A candidate waiting for a person's review, as the proposer is told of it."""

    action: str
    skill: str
    branch: str

    def __str__(self) -> str:
        return f"{self.action} {self.skill} ({self.branch})"


@dataclass(frozen=True)
class ProposerContext:
    """What the skill proposer is shown of a round; its fields fill prompts/proposer_user.j2."""

    round: int = 0
    incumbent: float = 0.0
    """Main's validation score."""
    train_score: float = 0.0
    index: str = ""
    """The wiki's index.md on main."""
    impact: str = ""
    """The skill-impact log on main: every earlier decision, so a rejected change is not proposed again."""
    skills: list[Skill] = field(default_factory=list)
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    """One row per train (and ingested) trajectory: `id`, `success`, `score`, `prediction`, `expected`."""
    pending: list[WaitingCandidate] = field(default_factory=list)
    """The candidates waiting for a person's review (`gate.review: human`)."""
    locked: list[str] = field(default_factory=list)
    """The skills a person locked (`skills.locked`): no patch or retire of them is accepted."""
    retire: list[str] = field(default_factory=list)
    """Skills the last `wikiskill uplift` showed no value for when left out: candidates to retire."""
    rarely_loaded: list[SkillValue] = field(default_factory=list)
    """Skills the last `wikiskill uplift` found loaded too rarely on the tasks they are for, with
    their trigger figures: candidates for a `describe`."""
    max_tokens: int | None = None
    """`skills.max_tokens`: the bound on the skills block a create must stay within."""

    def off_limits(self) -> set[str]:
        """The skills no proposal may change this round: the locked ones and those whose
        candidate waits for review (a proposal of either is refused before validation)."""
        return {*self.locked, *(item.skill for item in self.pending)}

    def prompt_fields(self) -> dict[str, object]:
        """The template's variables, by field name."""
        return {each.name: getattr(self, each.name) for each in fields(self)}


class Library(Protocol):
    """Read access for roles: the workspace's train material only."""

    def read(self, path: str) -> tuple[str, bool]:
        """The file's text and whether it is a trace; raises LookupError with a reason."""
        ...

    def list(self, path: str) -> list[str]: ...


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


@dataclass(frozen=True)
class AgentParts:
    """What every task agent is made from, the recipe its `from_parts` reads: the models of the
    roles, the suite, the skills it is shown, the workspace's settings (the agent's and the
    skills'), the wiki it may read and the seed of an agent that draws (None: `seed`'s)."""

    models: Callable[[Role], ChatModel]
    benchmark: Benchmark
    skills: list[Skill]
    config: Config
    shelf: WikiShelf | None = None
    seed: int | None = None

    @cached_property
    def model(self) -> ChatModel:
        """The agent's model, made when an agent first asks for it: a CLI or a callable needs none."""
        return self.models(Role.AGENT)


class Player(Protocol):
    """Any task agent's one constructor shape (`run/team.py` picks the class: the runner's, the
    kind's): the agent that plays a QA or game suite's tasks (`TaskAgent`), a workdir suite's in a
    folder (`WorkdirAgent`) or a container suite's in its container (`EnvironmentAgent`)."""

    @classmethod
    def from_parts(cls, parts: AgentParts) -> TaskAgent | WorkdirAgent | EnvironmentAgent:
        """The agent, from its parts."""
        ...


class AgentKind(Player, Protocol):
    """A kind of LLM task agent (`core/parts.py` TASK_AGENT; `agent.kind` names one): the built-in
    runner plays a suite with the kind `agent.kind` names, else with the built-in kind that `plays`
    the suite's kind. A workdir kind's agents are `WorkdirAgent`s, the others' `TaskAgent`s."""

    name: str
    plays: BenchmarkKind
    """The kind of suite it plays."""

    @classmethod
    def from_parts(cls, parts: AgentParts) -> TaskAgent | WorkdirAgent:
        """The agent, from its parts."""
        ...


class EnvironmentAgent(Protocol):
    """Plays one task of a Harbor suite inside the task's environment, its container
    (`roles/shell_agent.py`, `roles/python_agent.py`, `roles/reference_agent.py`); the caller
    starts the container, verifies the work after it and removes the container."""

    async def play_in(self, task: Task, environment: TaskEnvironment) -> Trajectory:
        """The episode as an unscored trajectory, its commands run in `environment`."""


class ReferenceAgent(EnvironmentAgent, Protocol):
    """An agent that checks a suite of containers rather than plays it (`core/parts.py`
    REFERENCE_AGENT; `agent.runner: oracle | nop`), made like any task agent (`Player`)."""

    @classmethod
    def from_parts(cls, parts: AgentParts) -> EnvironmentAgent:
        """The agent, from its parts."""
        ...


class Scorer(Protocol):
    """Scores a workdir task's work where it was done (`run/scorers.py`: `command`, `python:`;
    `roles/judge.py`: `judge`). It may block (it runs in a thread). An exception is the scorer
    crashing, an infrastructure failure (the task is retried `infra.retries` times, then left out of the score);
    a `run/scorers.ScorerTimeout` is the task's own timeout failure."""

    def score(self, task: Task, trajectory: Trajectory, workdir: Path) -> Score:
        """The value in [0, 1] with written feedback, from the finished `workdir` and the
        unscored `trajectory` (its final answer is `prediction`)."""


class WikiMaintainer(Protocol):
    """Turns a round's sampled traces into page edits (`roles/maintainer.py`,
    `roles/offline/maintainer.py`); it returns them and writes nothing."""

    def run(
        self,
        round_number: int,
        wiki: WikiView,
        traces: list[Trajectory],
        train_score: float,
        passed: int,
        total: int,
        max_chars: int,
        check: Check = ...,
    ) -> MaintainerResult:
        """The page edits (`MaintainerOutput`) or the error, the usage and the transcript.
        `wiki` is the part of the wiki it is shown, each trace is cut to `max_chars`, and `check`
        gives the reasons the caller would refuse an output's pages (worth one retry)."""


class SkillProposer(Protocol):
    """Reads the wiki and traces through its `Library` and proposes one skill change
    (`roles/proposer.py`, `roles/offline/proposer.py`); the harness validates and applies it."""

    def run(self, context: ProposerContext) -> ProposerResult:
        """The raw proposal (a dict the proposal model parses) or the error, with the reads, the
        usage and the transcript."""


class Roles(Protocol):
    """Builds the roles from the config (`run/team.py`)."""

    def agent(self, skills: list[Skill], seed: int | None = None, shelf: WikiShelf | None = None) -> TaskAgent:
        """The task agent with `skills`; `seed` (default: the config's) for agents that use one;
        `shelf`: the wiki it may read (`agent.wiki_access`)."""

    def maintainer(self, on_turn: TurnReport | None = None) -> WikiMaintainer: ...

    def proposer(
        self, library: Library, on_turn: TurnReport | None = None, check: ProposalCheck | None = None
    ) -> SkillProposer: ...


TASK_AGENTS = Registry(TASK_AGENT, AgentKind)
REFERENCE_AGENTS = Registry(REFERENCE_AGENT, ReferenceAgent)
