"""Build the roles for a workspace (`protocols.Roles`): LLM roles through litellm, or the
offline backend. Every task agent is made one way, `from_parts(AgentParts)`, by the class
`player` picks: the kind of runner `agent.runner` is (`roles/runners/`) says which: the user's own
(`roles/python_agent.py`), a coding-agent CLI (`roles/coding_agents/`), a reference agent, or
wikiskill's own (the kind `agent.kind` names in the task-agent registry, else the built-in kind
that plays the suite's kind, else the offline agent). On
a workdir suite that agent plays inside `run/workdir_tasks.py`'s wrapper, which scores the work
with the suite's scorer (`run/scorers.py`; the `judge` role for `scorer: judge`); on a suite of
containers inside `run/harbor_tasks.py`'s. The settings were checked before the run
(`run/preflight.py`), so building a role refuses nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..benchmarks import Benchmark, BenchmarkKind
from ..benchmarks.harbor import ContainerSuite
from ..benchmarks.task_folders import ScorerName, TaskFolders, VerifierTimeout
from ..contracts.roles import (
    AgentParts,
    EnvironmentAgent,
    Library,
    Player,
    ProposalCheck,
    Scorer,
    SkillProposer,
    TaskAgent,
    TurnReport,
    WikiMaintainer,
    WorkdirAgent,
)
from ..contracts.runners import runner_of
from ..core.config import OFFLINE_MODEL, Config
from ..core.errors import SkillsNotWritten
from ..knowledge.shelf import WikiShelf
from ..knowledge.skills import Skill
from ..llm.cache import ResponseCache
from ..llm.chat import ChatModel
from ..llm.meter import Meter
from ..llm.model import LiteLLMModel
from ..llm.speed import SPEED_FILE, SpeedBook
from ..roles.judge import Judge
from ..roles.maintainer import Maintainer
from ..roles.proposer import Proposer
from ..roles.settings import Role
from ..roles.skill_writer import SkillWriter
from .crash_rule import CrashRules, RuledScorer
from .harbor_tasks import ContainerSetup, HarborTaskAgent, open_setup
from .infra import RetryInfra
from .scorers import build_scorer
from .workdir_tasks import WorkdirTaskAgent

if TYPE_CHECKING:
    pass

ModelFactory = Callable[[Role], ChatModel]


def player(config: Config, benchmark: Benchmark) -> type[Player]:
    """The class whose `from_parts` makes the task agent: the one the runner picks (which runner
    plays which suite was checked before the run: `run/preflight.py`)."""
    return runner_of(config.agent).player(config, benchmark)


class Team:
    """Makes agents, the maintainer and the proposer from the config.

    `model_factory` lets a host (or a test) supply its own ChatModel per role name.
    """

    def __init__(
        self,
        config: Config,
        benchmark: Benchmark,
        meter: Meter,
        state_dir: Path,
        model_factory: ModelFactory | None = None,
    ):
        self.config = config
        self.benchmark = benchmark
        self.meter = meter
        self.state_dir = state_dir
        self._containers: ContainerSetup | None = None
        cache = ResponseCache(state_dir / "responses.sqlite") if config.llm.cache else None
        self.speeds = speeds = SpeedBook(state_dir / SPEED_FILE)
        """The measured speed of every server the roles call, kept for the next command."""
        self._factory = model_factory or (
            lambda role: LiteLLMModel(config.role(role), config.llm, role, meter, cache, speeds)
        )

    def offline(self, role: Role) -> bool:
        return self.config.role(role).model == OFFLINE_MODEL

    def agent(self, skills: list[Skill], seed: int | None = None, shelf: WikiShelf | None = None) -> RetryInfra:
        """The task agent with `skills`; `seed` (default: the config's) seeds agents that use one;
        `shelf` is the wiki it may read with `read_wiki` (only with `agent.wiki_access`). A task
        whose machinery fails is retried `infra.retries` times, then recorded as infra (`run/infra.py`)."""
        return RetryInfra(self._agent(skills, seed, shelf), self.benchmark.spec.kind, self.config.infra)

    def _agent(self, skills: list[Skill], seed: int | None, shelf: WikiShelf | None) -> TaskAgent:
        parts = AgentParts(self._factory, self.benchmark, skills, self.config, shelf, seed)
        made = player(self.config, self.benchmark).from_parts(parts)
        if isinstance(self.benchmark, ContainerSuite):
            return HarborTaskAgent(cast(EnvironmentAgent, made), self.benchmark, self.containers())
        if self.benchmark.spec.kind is BenchmarkKind.WORKDIR:
            return WorkdirTaskAgent(cast(WorkdirAgent, made), self.scorer(), self._timeouts())
        return cast(TaskAgent, made)

    def containers(self) -> ContainerSetup:
        """The container engine and image cache every Harbor task of this team shares."""
        if self._containers is None:
            self._containers = open_setup(self.config.environment, self.state_dir, harbor=self.config.harbor)
        return self._containers

    def _timeouts(self) -> VerifierTimeout:
        return cast(TaskFolders, self.benchmark).scoring.verifier_timeout

    def scorer(self) -> Scorer:
        """The scorer a workdir suite names, a crash of its check ruled by evidence about the check
        (`crash_rule.py`); the judge is built with the `judge` role's model."""
        suite = cast(TaskFolders, self.benchmark)
        settings = suite.scoring

        def judge() -> Scorer:
            return Judge(self._factory(Role.JUDGE), self.config.judge.samples, settings.feedback_chars)

        scorer = build_scorer(suite, judge)
        if settings.scorer != ScorerName.COMMAND:
            return scorer
        return RuledScorer(scorer, CrashRules(suite, self.state_dir, scorer))

    def maintainer(self, on_turn: TurnReport | None = None) -> WikiMaintainer:
        if self.offline(Role.MAINTAINER):
            from ..roles.offline.maintainer import OfflineMaintainer

            return OfflineMaintainer()
        return Maintainer(self._factory(Role.MAINTAINER), on_turn)

    def skill_writer(self) -> SkillWriter:
        """The proposer's model writing skills from task instructions alone (`uplift`'s self-written arm)."""
        if self.offline(Role.PROPOSER):
            raise SkillsNotWritten("the self-written arm needs a proposer model, not offline")
        return SkillWriter(self._factory(Role.PROPOSER))

    def proposer(
        self, library: Library, on_turn: TurnReport | None = None, check: ProposalCheck | None = None
    ) -> SkillProposer:
        settings = self.config.proposer
        if self.offline(Role.PROPOSER):
            from ..roles.offline.proposer import OfflineProposer

            return OfflineProposer(library, settings.min_trace_reads)
        return Proposer(
            self._factory(Role.PROPOSER),
            library,
            settings.max_turns,
            settings.min_trace_reads,
            settings.kept_results_tokens,
            on_turn,
            check,
        )
