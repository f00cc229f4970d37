"""`wikiskill ingest`: real agent sessions into raw/ as trajectories, so the next round's
maintainer samples them with its train traces and its proposer can read them.

They go to `raw/rNNN/ingested/<id>.json` for the next round that has not started, in one
`ingest` commit on main; every file is parsed before anything is written, so a malformed one
leaves the workspace as it was. Validation is untouched: it still runs on the benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..contracts.integrations import SessionParser
from ..core.errors import WikiskillError
from ..core.redact import Scrubber
from ..knowledge.leakage import HeldOut
from ..store.reads import WorkspaceReads
from ..store.rounds import completed_rounds, round_label, round_state
from ..store.traces import Outcome, Trajectory
from ..store.trailers import Step, Trailers
from ..store.workspace import MAIN, Workspace, format_message
from .sessions import INGESTED_SPLIT, read_session


@dataclass(frozen=True)
class IngestResult:
    round: int
    """The round whose maintainer and proposer will see the sessions."""
    commit: str | None
    """The ingest commit; None when every file was ingested before."""
    added: list[Trajectory]
    skipped: list[str]
    """Files whose session is already in raw/ (same text), not ingested again."""


def ingested_folder(round_number: int) -> str:
    return f"raw/{round_label(round_number)}/{INGESTED_SPLIT}"


def read_ingested(ws: WorkspaceReads, round_number: int) -> list[Trajectory]:
    """The sessions ingested for a round, in task-id order."""
    files = ws.read_files(MAIN, ingested_folder(round_number))
    return [Trajectory.model_validate_json(text) for path, text in sorted(files.items()) if path.endswith(".json")]


def next_round(ws: Workspace) -> int:
    """The first round that has not started: the one whose steps will read what is ingested now."""
    number = completed_rounds(ws) + 1
    return number + 1 if round_state(ws, number).started else number


@dataclass(frozen=True)
class Session:
    """One session read and scrubbed, not yet written: where it came from and its trajectory."""

    source: Path
    trajectory: Trajectory


def read_sessions(paths: list[Path], parser: SessionParser, outcome: Outcome) -> list[Session]:
    """The transcript files as sessions of one format and outcome; a malformed file raises."""
    scrub = Scrubber()
    return [Session(path, read_session(path, parser, outcome, scrub)) for path in paths]


def ingest(ws: Workspace, sessions: list[Session], what: str, held_out: HeldOut | None = None) -> IngestResult:
    """Commit the sessions not ingested before to the next round's ingested folder, in one commit;
    `what` says what they are in its subject. Every session is read before this is called, so a
    malformed one has written nothing."""
    if held_out is not None:
        _refuse_leaks(sessions, held_out)
    with ws.writing("wikiskill ingest"):
        number = next_round(ws)
        present = {
            path.rpartition("/")[2].removesuffix(".json")
            for path in ws.list_paths(MAIN, "raw")
            if f"/{INGESTED_SPLIT}/" in path
        }
        added: dict[str, Trajectory] = {}
        skipped = []
        for session in sessions:
            trajectory = session.trajectory
            if trajectory.task_id in present or trajectory.task_id in added:
                skipped.append(str(session.source))
            else:
                added[trajectory.task_id] = trajectory
        if not added:
            return IngestResult(number, None, [], skipped)
        folder = ingested_folder(number)
        body = "\n".join(f"- {t.task_id}: {t.provenance.file if t.provenance else ''}" for t in added.values())
        message = format_message(
            f"{round_label(number)} ingest: {len(added)} {what}",
            Trailers(round=number, step=Step.INGEST, cost_usd=0.0, tokens=0),
            body,
        )
        sha = ws.commit({f"{folder}/{task_id}.json": t.to_json() for task_id, t in added.items()}, message)
        return IngestResult(number, sha, list(added.values()), skipped)


def _refuse_leaks(sessions: list[Session], held_out: HeldOut) -> None:
    for session in sessions:
        found = held_out.leaks(session.trajectory.to_json())
        if found:
            where = f"{session.source} {found[0]}"
            raise WikiskillError(
                f"{where}: not ingested, the proposer would read it (skills.leak_run {held_out.length})"
            )
