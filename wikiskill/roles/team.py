"""Build the three roles for a workspace: LLM roles through litellm, or the offline backend."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import cast

from ..benchmarks import Benchmark, BenchmarkKind, InteractiveBenchmark, QABenchmark, ToolUseBenchmark
from ..core.config import OFFLINE_MODEL, Config, Role
from ..llm.chat import ChatModel
from ..llm.model import LiteLLMModel
from ..llm.meter import Meter
from ..llm.cache import ResponseCache
from .agent import Agent, InteractiveAgent, QAAgent
from .maintainer import Maintainer
from .proposer import Library, Proposer
from .tool_agent import ToolUseAgent
from ..knowledge.skills import Skill
from .wikitool import WikiShelf

ModelFactory = Callable[[Role], ChatModel]


class Team:
    """Makes agents, the maintainer and the proposer from the config.

    `model_factory` lets a host (or a test) supply its own ChatModel per role name.
    """

    def __init__(self, config: Config, benchmark: Benchmark, meter: Meter, state_dir: Path,
                 model_factory: ModelFactory | None = None):
        self.config = config
        self.benchmark = benchmark
        self.meter = meter
        cache = ResponseCache(state_dir / "responses.sqlite") if config.llm.cache else None
        self._factory = model_factory or (
            lambda role: LiteLLMModel(config.role(role), config.llm, role, meter, cache)
        )

    def offline(self, role: Role) -> bool:
        return self.config.role(role).model == OFFLINE_MODEL

    def agent(self, skills: list[Skill], seed: int | None = None, shelf: WikiShelf | None = None) -> Agent:
        """The task agent with `skills`; `seed` (default: the config's) seeds agents that use one;
        `shelf` is the wiki it may read with `read_wiki` (only with `agent.wiki_access`)."""
        if self.offline(Role.AGENT):
            from .offline.agent import OfflineAgent

            return OfflineAgent(self.benchmark, skills, self.config.agent.max_steps,
                                self.config.seed if seed is None else seed)
        model = self._factory(Role.AGENT)
        if self.benchmark.spec.kind is BenchmarkKind.QA:
            return QAAgent(model, cast(QABenchmark, self.benchmark), skills, self.config.skills, shelf)
        if self.benchmark.spec.kind is BenchmarkKind.TOOL_USE:
            return ToolUseAgent(model, cast(ToolUseBenchmark, self.benchmark), skills, self.config.skills,
                                self.config.agent.max_steps, shelf)
        return InteractiveAgent(model, cast(InteractiveBenchmark, self.benchmark), skills, self.config.skills,
                                self.config.agent.max_steps, shelf)

    def maintainer(self):
        if self.offline(Role.MAINTAINER):
            from .offline.maintainer import OfflineMaintainer

            return OfflineMaintainer()
        return Maintainer(self._factory(Role.MAINTAINER))

    def proposer(self, library: Library):
        settings = self.config.proposer
        if self.offline(Role.PROPOSER):
            from .offline.proposer import OfflineProposer

            return OfflineProposer(library, settings.min_trace_reads)
        return Proposer(self._factory(Role.PROPOSER), library, settings.max_turns, settings.min_trace_reads)
