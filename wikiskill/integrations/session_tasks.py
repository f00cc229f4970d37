"""`wikiskill tasks from-sessions`: real agent sessions as drafts of task folders, for evolving on
the work people actually ask for, without labels.

Each session becomes `OUT/<split>/<id>/`: its user's first request as `task.md`, and the rubric a
model drafted from what the session shows the user accepted as `rubric.md`, graded by a judge
(`suite.yaml`, written when OUT has none). Every task folder also gets `REVIEW.md`: a draft until
a person has read it, fixed it and deleted that file, and the task-folder loader refuses a suite
while any folder holds one. Every file is read (secrets scrubbed) and every rubric drafted before
anything is written, so a bad file or a failed draft leaves OUT as it was.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..benchmarks import SPLITS, Split
from ..benchmarks.task_folders import DRAFT_MARKER as REVIEW_FILE
from ..contracts.integrations import SessionParser
from ..core.errors import WikiskillError
from ..core.redact import Scrubber
from ..roles.rubric_drafter import RubricDraft, RubricDrafter
from ..store.traces import Outcome, Trajectory, Usage
from .sessions import read_session

SUITE_FILE = "suite.yaml"
SUITE_YAML = """\
# Tasks drafted by `wikiskill tasks from-sessions` from real agent sessions, graded by a judge
# against each task's rubric.md. A task folder holding REVIEW.md is a draft: wikiskill refuses the
# suite until a person has reviewed every task and deleted its REVIEW.md.
scorer: judge
"""


@dataclass(frozen=True)
class DraftedTask:
    id: str
    folder: Path
    source: str
    """The session file it was drafted from."""
    criteria: int


@dataclass(frozen=True)
class SessionTasks:
    out: Path
    written: list[DraftedTask]
    skipped: list[str]
    """Session files whose task folder OUT already holds (same text, same id): not drafted again."""
    usage: Usage


def first_request(session: Trajectory) -> str:
    """The user's first message, whole: the task."""
    return next(str(m["content"]).strip() for m in session.messages if m["role"] == "user" and m["content"].strip())


def existing_ids(out: Path) -> set[str]:
    return {folder.name for split in SPLITS if (out / split).is_dir() for folder in (out / split).iterdir()}


def tasks_from_sessions(
    paths: list[Path], out: Path, parser: SessionParser, drafter: RubricDrafter, model: str, split: Split = "train"
) -> SessionTasks:
    """Draft a task folder under `out/split/` for each session file; `model` names the drafter in
    each REVIEW.md."""
    if not paths:
        raise WikiskillError("name at least one session file to draft tasks from")
    if out.exists() and not out.is_dir():
        raise WikiskillError(f"{out} is a file, not a folder for the task suite")
    scrub = Scrubber()
    sessions = [(path, read_session(path, parser, Outcome.UNKNOWN, scrub)) for path in paths]
    present = existing_ids(out) if out.is_dir() else set()
    todo: dict[str, tuple[Path, Trajectory]] = {}
    skipped = []
    for path, session in sessions:
        if session.task_id in present or session.task_id in todo:
            skipped.append(str(path))
        else:
            todo[session.task_id] = (path, session)
    usage = Usage()
    drafts: dict[str, RubricDraft] = {}
    for task_id, (path, session) in todo.items():
        result = drafter.draft(first_request(session), session)
        usage = usage + result.usage
        if result.draft is None:
            raise WikiskillError(f"{path}: no rubric could be drafted ({result.error}); nothing was written")
        drafts[task_id] = result.draft
    written = [
        _write(out, split, task_id, path, session, drafts[task_id], parser, model)
        for task_id, (path, session) in todo.items()
    ]
    if written and not (out / SUITE_FILE).exists():
        (out / SUITE_FILE).write_text(SUITE_YAML, encoding="utf-8")
    return SessionTasks(out, written, skipped, usage)


def _write(
    out: Path,
    split: Split,
    task_id: str,
    path: Path,
    session: Trajectory,
    draft: RubricDraft,
    parser: SessionParser,
    model: str,
) -> DraftedTask:
    """The task folder, written in a hidden folder of `out` (outside every split) and renamed into
    its place, so no split ever holds half a task."""
    parent = out / split
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".draft-", dir=out))
    try:
        (staging / "task.md").write_text(first_request(session) + "\n", encoding="utf-8")
        (staging / "rubric.md").write_text(
            "A good result:\n\n" + "".join(f"- {c}\n" for c in draft.criteria), encoding="utf-8"
        )
        (staging / REVIEW_FILE).write_text(_review(path, parser, model, draft), encoding="utf-8")
        os.chmod(staging, 0o755)
        staging.rename(parent / task_id)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return DraftedTask(task_id, parent / task_id, str(path), len(draft.criteria))


def _review(path: Path, parser: SessionParser, model: str, draft: RubricDraft) -> str:
    return (
        "# Review this draft\n\n"
        f"Drafted by `wikiskill tasks from-sessions` from {path.name} ({parser.format}); {model} wrote\n"
        "the rubric from what the session shows the user accepted, and it may be wrong:\n\n"
        f"> {' '.join(draft.accepted.split())}\n\n"
        "wikiskill refuses to load the suite while any task folder holds this file.\n\n"
        "1. task.md is the user's first request as they wrote it: remove anything private, and add a\n"
        "   files/ folder if the task needs the user's files.\n"
        "2. rubric.md lists what the judge checks, one criterion a line: fix or remove any the session\n"
        "   does not support.\n"
        "3. Move the folder to val/ or test/ if it should judge changes rather than teach.\n"
        "4. Delete this file.\n"
    )
