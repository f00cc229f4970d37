"""The specs of the built-in families whose suites also read them: the family (builtin.py) lists
and checks names without importing its suite's module, and the suite, opened without its family
(as the tests do), still has its spec. Both read it here, so neither imports the other."""

from __future__ import annotations

from .base import BenchmarkKind, BenchmarkSpec, SplitCounts

TEXTWORLD_COOKING_SPLITS = SplitCounts(train=39, val=18, test=134)

QA_MAX_STEPS = 30
"""The config's default step limit; a QA agent answers in one reply, so it never reaches it."""

TEXTWORLD_COOKING = BenchmarkSpec(
    family="textworld-cooking",
    kind=BenchmarkKind.INTERACTIVE,
    summary="TextWorld cooking games (First TextWorld Problems recipes), generated offline",
    default_splits=TEXTWORLD_COOKING_SPLITS,
    max_steps=40,
    offline_playable=True,
    version="1",
    requires=("textworld",),
)

JSONL = BenchmarkSpec(
    family="jsonl",
    kind=BenchmarkKind.QA,
    summary="your own QA data: DIR/{train,val,test}.jsonl with id, question, answer per line",
    argument="DIR",
    argument_required=True,
    max_steps=QA_MAX_STEPS,
    version="1",
)
