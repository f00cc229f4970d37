"""The bubblewrap (`bwrap`) command line that confines a command to its task's working directory.

Inside, the whole file system is read-only, the working directory is the one writable place,
`/tmp` and the home folder are empty scratch space (so the user's real home, its keys and
dotfiles, cannot be read), and there is no network. Without `bwrap` on PATH a command runs
directly in the working directory, with no such limits.
"""

from __future__ import annotations

import shutil
from pathlib import Path

BWRAP = "bwrap"


def bwrap_path() -> str | None:
    """Where `bwrap` is, or None when bubblewrap is not installed."""
    return shutil.which(BWRAP)


def confined(argv: list[str], workdir: Path, home: Path, bwrap: str) -> list[str]:
    """`argv` run by `bwrap` in `workdir`: `/` read-only, `workdir` writable, `/tmp` and `home`
    empty, no network, and every process in it killed when bwrap is."""
    workdir = str(workdir.resolve())
    return [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        "--tmpfs", str(home),
        "--bind", workdir, workdir,  # after the tmpfs mounts, so a workdir under /tmp or home stays itself
        "--chdir", workdir,
        "--unshare-net",
        "--unshare-pid",
        "--die-with-parent",
        "--new-session",
        "--",
        *argv,
    ]
