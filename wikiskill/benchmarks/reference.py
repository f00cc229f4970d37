"""A suite's known-good policy, played: proof that its adapter scores a solved task 1.0."""

from __future__ import annotations

from typing import cast

from .base import (
    Benchmark,
    BenchmarkKind,
    FunctionCall,
    HasReferenceActions,
    HasReferenceCalls,
    InteractiveBenchmark,
    QABenchmark,
    Task,
    ToolUseBenchmark,
    normalized_score,
)


def play_reference(benchmark: Benchmark, task: Task) -> float | None:
    """The score of the suite's known-good policy on `task`: an interactive suite's
    `reference_actions`, a tool-use suite's `reference_calls`, a QA task's own answer;
    None where the suite has none."""
    kind = benchmark.spec.kind
    if kind is BenchmarkKind.INTERACTIVE and isinstance(benchmark, HasReferenceActions):
        return play_actions(cast(InteractiveBenchmark, benchmark), task, benchmark.reference_actions(task))
    if kind is BenchmarkKind.TOOL_USE and isinstance(benchmark, HasReferenceCalls):
        return play_calls(cast(ToolUseBenchmark, benchmark), task, benchmark.reference_calls(task))
    if kind is BenchmarkKind.QA and task.answer is not None:
        return cast(QABenchmark, benchmark).score(task, task.answer)
    return None


def play_nothing(benchmark: Benchmark, task: Task) -> float | None:
    """The score of doing nothing on `task`: no action, no call, no answer; None where the suite
    has no known-good policy to set it against."""
    kind = benchmark.spec.kind
    if kind is BenchmarkKind.INTERACTIVE and isinstance(benchmark, HasReferenceActions):
        return play_actions(cast(InteractiveBenchmark, benchmark), task, [])
    if kind is BenchmarkKind.TOOL_USE and isinstance(benchmark, HasReferenceCalls):
        return play_calls(cast(ToolUseBenchmark, benchmark), task, [])
    if kind is BenchmarkKind.QA and task.answer is not None:
        return cast(QABenchmark, benchmark).score(task, None)
    return None


def play_actions(benchmark: InteractiveBenchmark, task: Task, actions: list[str]) -> float:
    env = benchmark.make_env(task)
    try:
        state = env.reset()
        for action in actions:
            state = env.step(action)
        return normalized_score(state)
    finally:
        env.close()


def play_calls(benchmark: ToolUseBenchmark, task: Task, calls_per_turn: list[list[FunctionCall]]) -> float:
    session = benchmark.open_session(task)
    try:
        for turn, calls in enumerate(calls_per_turn):
            if calls:
                session.execute(turn, calls)
        return session.score(len(session.user_turns))
    finally:
        session.close()
