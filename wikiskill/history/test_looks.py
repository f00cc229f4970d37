"""The sealed test split: no evolve step scores it, and every look at it (`eval --split test`,
`compare --split test`, `uplift`) is one commit on the `test-looks` branch, written before the
look runs, so a look killed half way still counts.

A test score read once says how main's skills do on tasks the gate never saw; read after every
round it becomes one more val split, tuned to. The count of looks is what tells a reader which.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ..store.reads import WorkspaceReads
from ..store.trailers import Step, Trailers, format_message

if TYPE_CHECKING:
    from ..loop.harness import Harness

LOOKS_BRANCH = "test-looks"
LOOKS_FILE = "looks.jsonl"


def test_looks(ws: WorkspaceReads) -> int:
    """How many times the test split was looked at."""
    return sum(1 for commit in ws.log(LOOKS_BRANCH) if commit.meta.step == Step.TEST_LOOK)


def record_look(harness: Harness, command: str, refs: list[str]) -> int:
    """Commit one look at test by `command` at `refs` on the `test-looks` branch; its number."""
    ws = harness.ws
    number = test_looks(ws) + 1
    row = {
        "look": number,
        "command": command,
        "refs": {ref: ws.resolve(ref) for ref in refs},
        "skills_ids": [harness.reading.skills_id(ref) for ref in refs],
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    before = ws.read_file(LOOKS_BRANCH, LOOKS_FILE) if ws.head(LOOKS_BRANCH) else None
    message = format_message(
        f"test look {number}: {command} {' '.join(refs)}",
        Trailers(step=Step.TEST_LOOK, test_looks=number, cost_usd=0.0),
        "The test split was scored; each look makes its score a little less a measure of tasks never seen.",
    )
    ws.commit({LOOKS_FILE: (before or "") + json.dumps(row) + "\n"}, message, branch=LOOKS_BRANCH)
    return number


@contextmanager
def looking_at_test(harness: Harness, command: str, refs: list[str]) -> Iterator[int]:
    """Unseal the test split for one command, its look recorded first."""
    number = record_look(harness, command, refs)
    harness.evaluating.test_sealed = False
    try:
        yield number
    finally:
        harness.evaluating.test_sealed = True


def looks_at(harness: Harness, split: str, command: str, refs: list[str]) -> AbstractContextManager[object]:
    """`looking_at_test` when `split` is test; nothing to record for the others."""
    return looking_at_test(harness, command, refs) if split == "test" else nullcontext()
