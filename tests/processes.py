"""Processes as /proc sees them: whether one still runs, for tests that kill a run and check
that none of its processes is left behind."""

from pathlib import Path


def stat(pid: int) -> list[str] | None:
    """state, ppid, pgrp, session, ... of a process, or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return text[text.rindex(")") + 2 :].split()


def alive(pid: int) -> bool:
    fields = stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")  # a zombie has ended, only not yet reaped
