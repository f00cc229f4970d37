"""Keeping main's working tree in step with main: git's own checkout, on a background thread
while the next step runs, with a marker that names the tip the tree must reach so that a killed
run's sync can be finished by `recover`."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..core.errors import WorkspaceError

STALE_LOCK_SECONDS = 1.0


class WorkingTreeSyncs:
    """Brings main's working tree up to each commit published on main, in order.

    In the foreground (the default) each sync runs before `publishing` returns. Inside
    `in_background()` (a writer holding the workspace lock) they run one after another on a
    thread while the harness goes on to its next step; `wait(paths)` blocks only while a pending
    sync touches `paths`. The marker file names the tip the tree must reach from the moment before
    a ref moves until every sync is done, so `recover` can finish the job after a kill.
    """

    def __init__(self, sync: Callable[[str | None, str], None], marker: Path):
        self._sync = sync
        self._marker = marker
        self._background = False
        self._publishing = False
        self._jobs: list[tuple[str, str, frozenset[str] | None]] = []  # (old, new, changed paths or None)
        self._error: Exception | None = None
        self._thread: threading.Thread | None = None
        self._changed = threading.Condition()

    @contextmanager
    def publishing(self, old: str, new: str, paths: list[str] | None) -> Iterator[None]:
        """Around the ref update that moves main from `old` to `new`; syncs (or queues) after it."""
        self.wait_for_errors()
        with self._changed:
            self._publishing = True  # the marker now names `new`: the worker must not remove it
            write_json(self._marker, {"new": new})
        try:
            yield
        except BaseException:
            with self._changed:
                self._publishing = False
                if self._jobs:
                    write_json(self._marker, {"new": self._jobs[-1][1]})
                else:
                    self._marker.unlink(missing_ok=True)
            raise
        if not self._background:
            self._publishing = False
            self._sync(old, new)
            self._marker.unlink(missing_ok=True)
            return
        with self._changed:
            self._publishing = False
            self._jobs.append((old, new, None if paths is None else frozenset(paths)))
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="wikiskill-sync")
                self._thread.start()

    def _work(self) -> None:
        while True:
            with self._changed:
                if not self._jobs:
                    self._thread = None
                    return
                old, new, _ = self._jobs[0]
            try:
                self._sync(old, new)
            except Exception as exc:  # noqa: BLE001 - raised to the writer by wait(); the marker stays
                with self._changed:
                    self._error, self._jobs, self._thread = exc, [], None
                    self._changed.notify_all()
                return
            with self._changed:
                self._jobs.pop(0)
                if not self._jobs and not self._publishing:
                    self._marker.unlink(missing_ok=True)
                self._changed.notify_all()

    def wait(self, paths: tuple[str, ...] | None = None) -> None:
        """Block while a pending sync touches `paths` (None: any); raise a sync's failure."""
        with self._changed:
            self._changed.wait_for(lambda: not any(_touches(job[2], paths) for job in self._jobs))
        self.wait_for_errors()

    def wait_for_errors(self) -> None:
        with self._changed:
            error, self._error = self._error, None
        if error is not None:
            raise error

    @contextmanager
    def in_background(self) -> Iterator[None]:
        """Syncs run on a thread inside this block; all of them are done when it ends. When the
        block raises, that error is the one reported: a failed sync has left its marker."""
        self._background = True
        try:
            yield
        except BaseException:
            self._background = False
            with self._changed:
                self._changed.wait_for(lambda: not self._jobs)
                self._error = None
            raise
        self._background = False
        self.wait()


def _touches(changed: frozenset[str] | None, paths: tuple[str, ...] | None) -> bool:
    """Whether a sync that changes `changed` (None: unknown) can touch a file under `paths`."""
    if changed is None or paths is None:
        return True
    return any(a == b or a.startswith(b + "/") or b.startswith(a + "/") for a in changed for b in paths)


def write_json(path: Path, data: dict[str, object]) -> None:
    """Replace `path` with `data` atomically."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)


def sync_worktree(run_git: Callable[[list[str]], bytes], old: str | None, new: str, attempts: int = 20) -> None:
    """Make the index and the working files match `new`, by git's own checkout: from `old`,
    only the files that differ between the two commits are touched (unchanged ones keep their
    index entries and stat data); without it, every file is compared, so whatever state a
    killed run left is repaired. Git never writes or deletes through a symlinked folder.
    Waits a little while another git command holds the index; unlike `git reset` it locks no ref."""
    trees = [old, new] if old else [new]
    for attempt in range(attempts):
        try:
            run_git(["read-tree", "--reset", "-u", *trees])
            return
        except WorkspaceError as exc:
            if "index.lock" not in str(exc) or attempt == attempts - 1:
                raise WorkspaceError(f"cannot update the working tree: {exc}") from None
            time.sleep(0.1)


def remove_stale_git_locks(git_dir: Path) -> None:
    """Delete the lock files of git commands killed with wikiskill (index, HEAD, refs).

    A live git command holds its lock for milliseconds, so a lock older than
    STALE_LOCK_SECONDS is a dead one's; younger ones are given that long first.
    """
    candidates = [git_dir / name for name in ("index.lock", "HEAD.lock", "packed-refs.lock")]
    for lock in candidates + sorted((git_dir / "refs").rglob("*.lock")):
        try:
            age = time.time() - lock.stat().st_mtime
        except FileNotFoundError:
            continue
        time.sleep(max(0.0, STALE_LOCK_SECONDS - age))
        lock.unlink(missing_ok=True)
