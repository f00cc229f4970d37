"""One writer at a time: an flock on .wikiskill/lock, which the kernel drops when its holder dies,
so a lock left by a killed run is simply taken over."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..core.errors import WorkspaceError


@contextmanager
def hold_lock(path: Path, command: str) -> Iterator[None]:
    """Hold the lock at `path` for `command`; refuse at once, naming the holder, when it is held."""
    handle = open(path, "a+", encoding="utf-8")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise WorkspaceError(f"workspace is busy: {holder} holds its lock; wait for it or stop it") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} ({command})")
        handle.flush()
        yield
    finally:
        handle.close()
