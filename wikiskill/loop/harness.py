"""The harness of one command: it loads the suite, meters the models, and composes the three
contexts its users take, each holding only what they do:

    Reader     (`reading`)     the workspace's history (its read side), the settings, the tasks
    Evaluator  (`evaluating`)  setups, fingerprints, recorded evaluations, running tasks, roles
    Publisher  (`publishing`)  a step's cost, its commit and trailers, tags and branches

A step of a round is handed all three as one `StepContext` (wikiskill/loop/steps/); `compare`,
`estimate` and a re-running `audit` take the Evaluator, which reads through its Reader."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from ..benchmarks import Benchmark, ReferenceSuite, load_benchmark
from ..contracts.running import Reporter
from ..core.config import Config
from ..llm.meter import Meter
from ..run.team import ModelFactory, Team
from ..store.settings import load_config
from ..store.traces import Trajectory, Usage
from ..store.unsound import read_unsound
from ..store.workspace import MAIN, Workspace
from .evaluating import Evaluated, Evaluator
from .publishing import Publisher
from .reading import Reader

__all__ = ["Evaluated", "Harness", "QuietReporter", "StepContext"]


class QuietReporter:
    def info(self, message: str) -> None:
        pass

    def preparing(self, done: int, total: int) -> None:
        pass

    def turn(self, description: str, turn: int, usage: Usage) -> None:
        pass

    def tasks(self, description: str, total: int) -> AbstractContextManager[Callable[[Trajectory], None]]:
        return nullcontext(lambda trajectory: None)


@dataclass(frozen=True)
class StepContext:
    """What a step of a round is handed; its helpers each take the one context they use."""

    reader: Reader
    evaluator: Evaluator
    publisher: Publisher


class Harness:
    """The three contexts of one command over one loaded suite. `open` loads what they hold (the
    settings, the suite, the tasks the last evolve left out as unsound, the roles); the constructor
    only composes what it is handed."""

    def __init__(
        self,
        workspace: Workspace,
        config: Config,
        benchmark: Benchmark,
        team: Team,
        reporter: Reporter,
        local: bool = False,
    ):
        """`local`: the tasks run here, on one worker (a host's model factory cannot cross processes)."""
        self.ws = workspace
        self.config = config
        self.benchmark = benchmark
        self.reading = Reader(workspace.read_side(), config, benchmark, reporter)
        self.evaluating = Evaluator(self.reading, team, team.meter, workspace.root, workspace.state_dir, local=local)
        self.publishing = Publisher(workspace, team.meter)
        self.steps = StepContext(self.reading, self.evaluating, self.publishing)

    @classmethod
    def open(
        cls,
        workspace: Workspace,
        config: Config | None = None,
        reporter: Reporter | None = None,
        model_factory: ModelFactory | None = None,
    ) -> Harness:
        """The harness of `workspace` under `config` (default: its wikiskill.yaml): the suite loaded
        (a registry dataset fetched as it loads, once per machine), the unsound tasks the last
        evolve recorded on main left out, the roles built on one meter."""
        config = config or load_config(workspace.root)
        reporter = reporter or QuietReporter()
        benchmark = load_benchmark(config, workspace.root, progress=reporter.preparing)
        if isinstance(benchmark, ReferenceSuite) and benchmark.checks_references and config.harbor.require_sound:
            benchmark.leave_out(read_unsound(workspace, MAIN))  # as the last evolve left them
        team = Team(config, benchmark, Meter(config.budget), workspace.state_dir, model_factory)
        return cls(workspace, config, benchmark, team, reporter, local=model_factory is not None)

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.evaluating.close()

    def leave_out(self, unsound: dict[str, str]) -> None:
        """Take unsound tasks out of a suite whose tasks carry reference solutions, before anything
        is evaluated; the setups computed so far no longer hold."""
        if isinstance(self.benchmark, ReferenceSuite):
            self.benchmark.leave_out(unsound)
        self.evaluating.forget_setups()
