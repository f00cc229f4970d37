"""Sound before spent: the tasks of a suite whose reference solution (a Harbor task's solve.sh, a
task folder's solution/) does not score 1, or whose untouched folder does not score 0, leave
every split before an evolve spends anything on them, unless `harbor.require_sound` is false;
which and why is committed on main whenever it changes (`store/unsound.py`)."""

from __future__ import annotations

from ..benchmarks import ReferenceSuite
from ..run.crash_rule import unsound_references
from ..store.rounds import completed_rounds
from ..store.trailers import Step, Trailers
from ..store.unsound import UNSOUND_PATH, read_unsound, unsound_text
from ..store.workspace import MAIN
from .harness import Harness


def leave_out_unsound(harness: Harness) -> None:
    suite = harness.benchmark
    if not isinstance(suite, ReferenceSuite) or not suite.checks_references or not harness.config.harbor.require_sound:
        return
    ws, reporter, publisher = harness.ws, harness.reading.reporter, harness.publishing
    reporter.info("checking that each task's reference solution scores 1 and doing nothing 0")
    team = harness.evaluating.team
    unsound = unsound_references(suite, team.containers, ws.state_dir, harness.config.concurrency)
    harness.leave_out(unsound)
    for task_id, reason in unsound.items():
        reporter.info(f"left out as unsound: {task_id}: {reason}")
    if unsound == read_unsound(ws, MAIN):
        return
    publisher.begin_step()
    count = len(unsound)
    publisher.commit(
        f"soundness: {count} task{'' if count == 1 else 's'} left out as unsound",
        Trailers(round=completed_rounds(ws), step=Step.SOUNDNESS),
        {UNSOUND_PATH: unsound_text(unsound) if unsound else None},
    )
