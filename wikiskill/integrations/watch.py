"""Watch skills/ and wiki/ while a person edits them: lint each saved change at once and, when
asked, commit the edits that add no problem as `human` steps.

`watch(ws, on_report, commit=..., stop=..., timeout=...)` blocks until `stop` is set, `timeout`
passes or the caller is interrupted (Ctrl-C); it calls `on_report` once when it starts and then
once per burst of saves (editors write several events per save, so events are gathered until
0.3 s pass quietly).

Committing works in units: each `skills/<name>/` folder, the top of skills/, and the whole wiki
(index and pages refer to each other). A unit is committed when putting its edits on top of main
adds no lint problem; units are tried again after each one that goes in, so an edit that needs
another (a link to a page added in the same burst) goes in with it. The workspace lock is held
only while committing, so `evolve` and `watch --commit` can take turns.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler

from ..core.errors import WikiskillError
from ..knowledge.leakage import HeldOut, workspace_held_out
from ..knowledge.lint import LINTED, Problem, hidden, lint_files, lint_workspace, working_files
from ..store.rounds import completed_rounds
from ..store.trailers import Step, Trailers
from ..store.workspace import MAIN, Workspace, format_message

DEBOUNCE = 0.3
"""Seconds without a new event that end a burst of saves."""
MAX_BURST = 3.0
"""A burst is reported after this many seconds even if saves keep coming."""
_POLL = 0.1
_CHANGE_EVENTS = frozenset({"created", "deleted", "modified", "moved", "closed"})


@dataclass
class WatchReport:
    """What one burst of saves changed and what the working tree looks like after it."""

    changed: list[str]
    """Workspace-relative paths the burst touched."""
    problems: list[Problem]
    """Every lint problem of skills/ and wiki/ in the working tree."""
    committed: str | None = None
    """The `human` commit made for the valid edits (with `commit=True`)."""
    committed_paths: list[str] = field(default_factory=list)
    held_back: list[str] = field(default_factory=list)
    """Edited paths not committed because their unit would add lint problems."""
    note: str = ""
    """Why nothing could be committed (for example: an `evolve` run holds the workspace lock)."""


class ChangeForwarder(FileSystemEventHandler):
    """Calls `callback(path)` for every created, deleted, modified or moved path that
    `relevant(path)` accepts. Reads (opened / closed without writing) are ignored, so a reader
    of the watched files never triggers itself."""

    def __init__(self, callback: Callable[[str], None], relevant: Callable[[str], bool] = lambda path: True):
        super().__init__()
        self.callback = callback
        self.relevant = relevant

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in _CHANGE_EVENTS or (event.is_directory and event.event_type == "modified"):
            return  # a folder is "modified" whenever an entry in it changes: the entry has its own event
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = raw.decode() if isinstance(raw, bytes) else raw
            if path and self.relevant(path):
                self.callback(path)


def watch(
    ws: Workspace,
    on_report: Callable[[WatchReport], None],
    commit: bool = False,
    stop: threading.Event | None = None,
    timeout: float | None = None,
    debounce: float = DEBOUNCE,
) -> None:
    """Report (and with `commit`, commit) each burst of saves under skills/ and wiki/.

    The first report (with no changed paths) describes the state once the observer runs, so
    every later save is seen and reported."""
    from watchdog.observers import Observer

    stop = stop or threading.Event()
    events: queue.Queue[str] = queue.Queue()
    root = ws.root.resolve()
    handler = ChangeForwarder(events.put, lambda path: not hidden(_relative(root, path)))
    observer = Observer()
    for folder in LINTED:
        if (root / folder).is_dir():
            observer.schedule(handler, str(root / folder), recursive=True)
    observer.daemon = True
    held_out = workspace_held_out(ws.root)
    observer.start()
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        on_report(check(ws, [], commit, held_out))
        while not stop.is_set() and (deadline is None or time.monotonic() < deadline):
            try:
                first = events.get(timeout=_POLL)
            except queue.Empty:
                continue
            changed = _burst(events, first, debounce, stop)
            on_report(check(ws, [_relative(root, path) for path in changed], commit, held_out))
    finally:
        observer.stop()
        observer.join()


def _relative(root: Path, path: str) -> str:
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return path


def _burst(events: queue.Queue[str], first: str, debounce: float, stop: threading.Event) -> list[str]:
    """Gather events until `debounce` seconds pass without one (or MAX_BURST in all)."""
    paths = [first]
    end = time.monotonic() + MAX_BURST
    while not stop.is_set() and time.monotonic() < end:
        try:
            paths.append(events.get(timeout=debounce))
        except queue.Empty:
            break
    return sorted(set(paths))


def check(ws: Workspace, changed: list[str], commit: bool = False, held_out: HeldOut | None = None) -> WatchReport:
    """Lint the working tree (and look for held-out text in its skills); with `commit`, commit
    the edits that add no problem."""
    held_out = held_out or HeldOut(0, [])
    problems = lint_workspace(ws.root) + held_out.problems(working_files(ws.root, "skills"))
    report = WatchReport(changed, sorted(set(problems)))
    if commit:
        try:
            commit_valid_edits(ws, report, held_out)
        except WikiskillError as exc:  # an `evolve` holds the lock: the next save tries again
            report.note = str(exc)
        except Exception as exc:  # noqa: BLE001  e.g. a file vanished mid-commit; a long watch goes on
            report.note = f"commit failed ({exc.__class__.__name__}: {str(exc)[:200]}); the next save tries again"
    return report


def commit_valid_edits(ws: Workspace, report: WatchReport, held_out: HeldOut | None = None) -> None:
    """Commit, as one `human` step, the units of edits that add no lint problem to main."""
    with ws.writing("wikiskill watch --commit"):
        dirty = sorted(path for path in ws.dirty_paths(*LINTED) if not hidden(path))
        if not dirty:
            return
        accepted, held = valid_units(ws, dirty, held_out or HeldOut(0, []))
        report.held_back = held
        if not accepted:
            return
        message = format_message(
            _subject(accepted), Trailers(round=completed_rounds(ws), step=Step.HUMAN, cost_usd=0.0)
        )
        report.committed = ws.commit_working_tree(accepted, message)
        report.committed_paths = accepted


def valid_units(ws: Workspace, dirty: list[str], held_out: HeldOut) -> tuple[list[str], list[str]]:
    """Split edited paths into (committable, held back), unit by unit (see the module doc)."""
    root = ws.root
    current = {f"{folder}/{path}": text for folder in LINTED for path, text in ws.read_files(MAIN, folder).items()}
    working = working_files(root, *LINTED)

    def outside(path: str) -> bool:
        return (root / path).exists()

    def problems_of(files: dict[str, str]) -> set[Problem]:
        return set(lint_files(files, outside) + held_out.problems(files))

    known = problems_of(current)
    pending = _units(dirty)
    accepted: list[str] = []
    progress = True
    while progress:
        progress = False
        for unit, paths in sorted(pending.items()):
            if any((root / path).is_symlink() for path in paths):
                continue
            candidate = _overlay(current, working, paths)
            problems = problems_of(candidate)
            if problems <= known:
                current, known = candidate, problems
                accepted += paths
                del pending[unit]
                progress = True
    return sorted(accepted), sorted(path for paths in pending.values() for path in paths)


def _units(paths: list[str]) -> dict[str, list[str]]:
    units: dict[str, list[str]] = {}
    for path in paths:
        parts = path.split("/")
        key = f"skills/{parts[1]}" if parts[0] == "skills" and len(parts) > 2 else parts[0]
        units.setdefault(key, []).append(path)
    return units


def _overlay(base: Mapping[str, str], working: Mapping[str, str], paths: list[str]) -> dict[str, str]:
    tree = dict(base)
    for path in paths:
        if path in working:
            tree[path] = working[path]
        else:
            tree.pop(path, None)
    return tree


def _subject(paths: list[str]) -> str:
    if len(paths) == 1:
        return f"human edit: {paths[0]}"
    units = sorted(_units(paths))
    return f"human edits: {len(paths)} files in {', '.join(units[:3])}{' and more' if len(units) > 3 else ''}"
