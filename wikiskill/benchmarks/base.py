"""What a benchmark is: its spec, task lists per split, and how a kind of suite is scored.

Each kind of suite has its own protocol: a QA suite scores an answer, an interactive suite hands
out text environments, a tool-use suite hands out sessions of simulated APIs that a conversation
calls. The task agent for a suite is chosen by its spec's kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from ..core.parts import BENCHMARK_FAMILY, SCORER
from ..core.registry import Registry

if TYPE_CHECKING:
    from ..core.config import Config

Split = Literal["train", "val", "test"]
SPLITS: tuple[Split, ...] = ("train", "val", "test")


class BenchmarkKind(StrEnum):
    """How the task agent meets a suite's tasks."""

    QA = "qa"
    INTERACTIVE = "interactive"
    TOOL_USE = "tool_use"
    WORKDIR = "workdir"


class SplitCounts(BaseModel):
    """How many tasks each split holds by default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    train: int = Field(ge=0)
    val: int = Field(ge=0)
    test: int = Field(ge=0)


class BenchmarkSpec(BaseModel):
    """What a benchmark family declares about itself; `wikiskill benchmarks` lists these."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    family: str
    """The name before any `:`, e.g. `scienceworld` in `scienceworld:boil`."""
    kind: BenchmarkKind
    summary: str
    """One line on what the suite is."""
    argument: str | None = None
    """How the part after `:` is written (e.g. `<task-name>`); None when the family takes none."""
    argument_required: bool = False
    default_splits: SplitCounts | None = None
    """Split sizes when the config sets none; None when the suite's own files fix them."""
    max_steps: int = Field(ge=1)
    """The agent's step limit that `init` writes for this suite."""
    offline_playable: bool = False
    """Whether the built-in offline model can play it (else `init` asks for an LLM)."""
    version: str
    """Enters the evaluation fingerprint: bump it when the tasks or the scoring change."""
    needs: str = ""
    """What it needs beyond wikiskill's own install, in words (`wikiskill benchmarks` shows it)."""
    requires: tuple[str, ...] = ()
    """Modules that must be importable; a missing one is reported with `needs`."""
    examples: tuple[str, ...] = ()
    """Full names to try a family that needs an argument with (`benchmarks/perf/suites.py` measures them)."""
    judged: bool = False
    """Scored by an LLM judge (the `judge` role): refused without a judge model."""
    containers: bool = False
    """Each task runs in a container of its own, built from the suite's folders, and is verified
    there: the container engine is checked before a run, the verifier's code enters the
    fingerprint, the reference agents (`oracle`, `nop`) can check it against its solutions, and its
    split sizes are known without preparing it (`counts`)."""
    registry_datasets: bool = False
    """Its argument may name a dataset of a task registry (`NAME@VERSION`, from `harbor.registry`),
    fetched into the cache before the suite is read by the family's load (`harbor_datasets.py`)."""

    def benchmark_name(self, argument: str | None) -> str:
        """The suite's full name: `family`, or `family:argument`."""
        return self.family if argument is None else f"{self.family}:{argument}"


@dataclass(frozen=True)
class Task:
    """One task of a split. `question` is the QA question or the interactive objective."""

    id: str
    split: Split
    question: str
    answer: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    files: Path | None = None
    """A workdir task's files, copied into its fresh working directory before the agent starts."""


@dataclass(frozen=True)
class EnvStep:
    """What an interactive environment reports after `reset` or `step`.

    `score` is the cumulative game score so far and `max_score` the best reachable;
    `admissible_actions` is None when the environment does not offer them.
    """

    observation: str
    score: float
    max_score: float
    done: bool = False
    won: bool = False
    lost: bool = False
    admissible_actions: list[str] | None = None


def normalized_score(step: EnvStep) -> float:
    """score / max_score clipped to [0, 1]; a game without points scores 1 if won, else 0."""
    if step.max_score <= 0:
        return 1.0 if step.won else 0.0
    return max(0.0, min(1.0, step.score / step.max_score))


class TextEnv(Protocol):
    """A text environment for one task: observation in, one text action per turn."""

    def reset(self) -> EnvStep: ...

    def step(self, action: str) -> EnvStep: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class FunctionCall:
    """One call the agent makes to a tool-use task's functions: a name and JSON arguments."""

    name: str
    arguments: dict[str, Any] | None
    """None when the model's arguments were no JSON object; the session answers with an error."""


@dataclass(frozen=True)
class UserTurn:
    """One user message of a multi-turn tool-use task."""

    content: str
    added_tools: list[dict[str, Any]] = field(default_factory=list)
    """Function tools that become callable from this turn on (OpenAI function-tool format)."""


class ToolSession(Protocol):
    """One episode of a tool-use task: the simulated backends' state, changed by the agent's calls.

    The agent answers `user_turns` in order; within a turn each of its replies is one step, and
    the calls of a step are executed together. `score` judges the whole conversation.
    """

    tools: list[dict[str, Any]]
    """The function tools callable from the first turn (OpenAI function-tool format)."""
    user_turns: list[UserTurn]

    def execute(self, turn: int, calls: list[FunctionCall]) -> list[str]:
        """Run one step's calls against the backends; one result text per call."""

    def score(self, answered_turns: int) -> float:
        """The whole conversation's score; `answered_turns` says how many user turns the agent
        finished (one cut short by the step limit counts as unanswered)."""

    def close(self) -> None: ...


class Benchmark(Protocol):
    """A suite of tasks: a QA suite (`QABenchmark`), an interactive one (`InteractiveBenchmark`) or a
    tool-use one (`ToolUseBenchmark`)."""

    name: str
    spec: BenchmarkSpec

    def tasks(self, split: Split) -> list[Task]: ...

    def prepare(self, splits: tuple[Split, ...]) -> None:
        """Make these splits' tasks ready up front (generated suites generate them, with progress)."""


class QABenchmark(Benchmark, Protocol):
    """A suite whose tasks have one answer each; a prediction is scored against it."""

    def score(self, task: Task, prediction: str | None) -> float: ...


class InteractiveBenchmark(Benchmark, Protocol):
    """A suite of text environments; an episode's score comes from its environment.

    A suite that knows a winning action sequence for its tasks (a game's walkthrough, a gold
    trajectory) also offers `reference_actions` (`HasReferenceActions`): tests and
    `benchmarks/perf/suites.py` play it to check that the adapter scores a win as 1.0. A QA
    suite's known-good policy is its `Task.answer`.
    """

    def make_env(self, task: Task) -> TextEnv: ...


class ToolUseBenchmark(Benchmark, Protocol):
    """A suite of multi-turn function-calling tasks against simulated APIs."""

    def open_session(self, task: Task) -> ToolSession: ...


@runtime_checkable
class HasSetupDigest(Protocol):
    """A suite's optional hook: a digest of everything beyond its task ids, questions and answers
    that decides a score (a task folder's files, rubrics and suite.yaml); it enters the
    evaluation fingerprint."""

    def setup_digest(self) -> str: ...


def setup_digest_of(benchmark: Benchmark) -> str | None:
    """The suite's `setup_digest`, or None for a suite without the hook."""
    return benchmark.setup_digest() if isinstance(benchmark, HasSetupDigest) else None


@runtime_checkable
class HasReferenceActions(Protocol):
    """An interactive suite's optional hook: the actions that solve a task, played one per turn."""

    def reference_actions(self, task: Task) -> list[str]: ...


@runtime_checkable
class HasReferenceCalls(Protocol):
    """A tool-use suite's optional hook: the calls that serve a task, one list per user turn."""

    def reference_calls(self, task: Task) -> list[list[FunctionCall]]: ...


@runtime_checkable
class ReferenceSuite(Benchmark, Protocol):
    """A suite whose tasks carry reference solutions (a Harbor task's solve.sh, a task folder's
    solution/) that an evolve checks before it spends on them (`run/crash_rule.py`,
    `loop/soundness.py`, `harbor.require_sound`), leaving the unsound out of every split. Asked as
    `isinstance(suite, ReferenceSuite) and suite.checks_references`, never by the suite's class."""

    @property
    def checks_references(self) -> bool:
        """Whether its references are checked: a task-folder suite scored by answers or a judge has none."""
        ...

    def leave_out(self, unsound: dict[str, str]) -> None:
        """Take the `unsound` tasks (id: reason) out of every split."""


Progress = Callable[[int, int], None]
"""Called as `progress(done, total)` during one-off preparation such as generating games."""


@dataclass(frozen=True)
class LoadRequest:
    """What a family needs to open a suite: the workspace's config and where relative paths start."""

    config: Config
    root: Path | None = None
    progress: Progress | None = None

    def split_counts(self, spec: BenchmarkSpec) -> dict[Split, int]:
        """The config's split sizes, each unset one taken from the family's defaults."""
        configured = self.configured_splits()
        return {
            split: configured[split] if split in configured else getattr(spec.default_splits, split, 0)
            for split in SPLITS
        }

    def configured_splits(self) -> dict[Split, int]:
        """The split sizes the config sets itself (a suite may hold these to more than its defaults)."""
        sizes = {split: getattr(self.config.splits, split) for split in SPLITS}
        return {split: size for split, size in sizes.items() if size is not None}


class AnswerScorer(Protocol):
    """How a QA suite scores a prediction against a task's answer, from 0 to 1."""

    def score(self, prediction: str | None, answer: str) -> float: ...


@runtime_checkable
class BenchmarkFamily(Protocol):
    """One family of suites, as an entry point names it."""

    spec: BenchmarkSpec

    def check(self, argument: str | None, base: Path | None = None) -> str | None:
        """The canonical argument, or BenchmarkError naming what is wrong with it (cheap: no tasks built).

        `base` is the folder relative paths start from, when one is known (`init` passes the
        current folder, so that what it writes into the config is absolute).
        """

    def load(self, argument: str | None, request: LoadRequest) -> Benchmark:
        """The suite itself."""


BENCHMARK_FAMILIES = Registry(BENCHMARK_FAMILY, BenchmarkFamily)
SCORERS = Registry(SCORER, AnswerScorer)
