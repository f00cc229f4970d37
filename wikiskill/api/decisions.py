"""A person's decisions on the skills: the review queue, accepting and rejecting a candidate,
locking a skill, and rolling a change back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..store.settings import load_config
from ..store.workspace import Workspace
from .command import command_session
from .options import RunOptions

if TYPE_CHECKING:
    from ..history.review import ReviewItem
    from ..loop.review import ReviewDecision


def review(ws: Workspace) -> list[ReviewItem]:
    """The candidates waiting for a person's review (`gate.review: human`), oldest first, each with
    its diff, fixed and broken tasks, interval, cost change and the wiki pages and traces it cites."""
    from ..history.review import review_queue

    return review_queue(ws)


def accept(ws: Workspace, name: str, options: RunOptions | None = None) -> ReviewDecision:
    """Merge the pending candidate `name` (`rNNN-<name>` or its skill's name) in one commit decided
    by a person; when main's skills or the evaluation setup changed since it was validated, it is
    validated again first and the gate's verdict on that decides."""
    from ..loop.review import accept as _accept
    from ..store.pending import find_pending

    find_pending(ws, name)  # an unknown name is refused before the benchmark loads
    held = ws.writing("wikiskill accept")
    with command_session(ws, options or RunOptions(), "accept", held=held, traced=False) as harness:
        harness.benchmark.prepare(("val",))
        return _accept(harness, name)


def reject(ws: Workspace, name: str, why: str) -> ReviewDecision:
    """Turn down the pending candidate `name` for the reason `why`, in one commit decided by a
    person: tagged `rejected/rNNN-<name>`, the reason in skill-impact.md for the proposer."""
    from ..loop.review import reject as _reject

    load_config(ws.root)
    with ws.writing("wikiskill reject"):
        return _reject(ws, name, why)


def lock(ws: Workspace, name: str) -> str | None:
    """Add `name` to `skills.locked` in one commit (with the skill's uncommitted files, when a
    person wrote it by hand); None when it was locked and committed already."""
    from ..loop.review import set_lock

    with ws.writing("wikiskill lock"):
        return set_lock(ws, name, True)


def unlock(ws: Workspace, name: str) -> str | None:
    """Remove `name` from `skills.locked` in one commit; None when it was not locked."""
    from ..loop.review import set_lock

    with ws.writing("wikiskill unlock"):
        return set_lock(ws, name, False)
