"""What a benchmark is: task lists per split, a scorer, and (for interactive suites) environments."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Split = Literal["train", "val", "test"]
SPLITS: tuple[Split, ...] = ("train", "val", "test")


@dataclass(frozen=True)
class Task:
    """One task of a split. `question` is the QA question or the interactive objective."""

    id: str
    split: Split
    question: str
    answer: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


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


class TextEnv(Protocol):
    """A text environment for one task: observation in, one text action per turn."""

    def reset(self) -> EnvStep: ...

    def step(self, action: str) -> EnvStep: ...

    def close(self) -> None: ...


class Benchmark(Protocol):
    """A suite of tasks: a QA suite (`QABenchmark`) or an interactive one (`InteractiveBenchmark`)."""

    name: str
    agent_kind: Literal["qa", "interactive"]

    def tasks(self, split: Split) -> list[Task]: ...

    def prepare(self, splits: tuple[Split, ...]) -> None:
        """Make these splits' tasks ready up front (generated suites generate them, with progress)."""


class QABenchmark(Benchmark, Protocol):
    """A suite whose tasks have one answer each; a prediction is scored against it."""

    def score(self, task: Task, prediction: str | None) -> float: ...


class InteractiveBenchmark(Benchmark, Protocol):
    """A suite of text environments; an episode's score comes from its environment."""

    def make_env(self, task: Task) -> TextEnv: ...
