"""The harness of one command: it loads the suite, meters the models, and composes the three
contexts its users take, each holding only what they do:

    Reader     (`reading`)     the workspace's history, the settings, the suite's tasks
    Evaluator  (`evaluating`)  setups, fingerprints, recorded evaluations, running tasks, roles
    Publisher  (`publishing`)  a step's cost, its commit and trailers, tags and branches

A step of a round is handed all three as one `StepContext` (wikiskill/loop/steps/); `compare`,
`estimate` and a re-running `audit` take the Evaluator, which reads through its Reader."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from ..benchmarks import ReferenceSuite, load_benchmark
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
    def __init__(
        self,
        workspace: Workspace,
        config: Config | None = None,
        reporter: Reporter | None = None,
        model_factory: ModelFactory | None = None,
    ):
        self.ws = workspace
        self.config = config or load_config(workspace.root)
        reporter = reporter or QuietReporter()
        self.benchmark = load_benchmark(self.config, workspace.root, progress=reporter.preparing)
        meter = Meter(self.config.budget)
        team = Team(self.config, self.benchmark, meter, workspace.state_dir, model_factory)
        self.reading = Reader(workspace, self.config, self.benchmark, reporter)
        self.evaluating = Evaluator(
            self.reading, team, meter, workspace.root, workspace.state_dir, local=model_factory is not None
        )
        self.publishing = Publisher(workspace, meter)
        self.steps = StepContext(self.reading, self.evaluating, self.publishing)
        suite = self.benchmark
        if isinstance(suite, ReferenceSuite) and suite.checks_references and self.config.harbor.require_sound:
            suite.leave_out(read_unsound(workspace, MAIN))  # as the last evolve left them

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
