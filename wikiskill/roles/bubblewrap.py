"""The bubblewrap (`bwrap`) command line that confines a command to its task's working directory.

Inside, the whole file system is read-only, the working directory is the one writable place,
`/tmp` and the home folder are empty scratch space (so the user's real home, its keys and
dotfiles, cannot be read), and there is no network. The folders of the home that hold programs
(those on PATH, and the Python running wikiskill, e.g. under ~/.pyenv) come back read-only, so
the commands a task needs still run. Without `bwrap` on PATH a command runs directly in the
working directory, with no such limits.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

BWRAP = "bwrap"


def bwrap_path() -> str | None:
    """Where `bwrap` is, or None when bubblewrap is not installed."""
    return shutil.which(BWRAP)


def program_folders(home: Path) -> list[Path]:
    """The folders under `home` that hold programs: those on PATH, and this Python's
    installation (a virtual environment's and the one it was made from), shortest first."""
    candidates = [Path(entry) for entry in os.environ.get("PATH", "").split(os.pathsep) if entry]
    candidates += [Path(sys.prefix), Path(sys.base_prefix)]
    found = {path.resolve() for path in candidates if path.is_absolute() and path.is_dir()}
    return sorted((path for path in found if path.is_relative_to(home) and path != home), key=lambda p: len(p.parts))


def confined(argv: list[str], workdir: Path, home: Path, bwrap: str, keep: Sequence[Path] = ()) -> list[str]:
    """`argv` run by `bwrap` in `workdir`: `/` read-only, `workdir` writable, `/tmp` and `home`
    empty but for the folders in `keep` (read-only), no network, and every process in it killed
    when bwrap is."""
    workdir = str(workdir.resolve())
    kept = [argument for folder in keep for argument in ("--ro-bind", str(folder), str(folder))]
    return [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        "--tmpfs", str(home),
        *kept,
        "--bind", workdir, workdir,  # after the tmpfs mounts, so a workdir under /tmp or home stays itself
        "--chdir", workdir,
        "--unshare-net",
        "--unshare-pid",
        "--die-with-parent",
        "--new-session",
        "--",
        *argv,
    ]
