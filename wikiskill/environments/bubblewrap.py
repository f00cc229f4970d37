"""The bubblewrap (`bwrap`) command line that confines a command to its task's working directory
(the workdir agent's shell commands, and a CLI agent under `agent.sandbox: bwrap`).

Inside, the whole file system is read-only, the working directory is the one writable place,
`/tmp` and the home folder are empty scratch space (so the user's real home, its keys and
dotfiles, cannot be read), and there is no network. The folders in them that hold programs
(those on PATH, and the Python running wikiskill, e.g. under ~/.pyenv or a venv in /tmp) come
back read-only, so the commands a task needs still run. Without `bwrap` on PATH a command runs directly in the
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


def program_folders(hidden: Sequence[Path]) -> list[Path]:
    """The folders inside the `hidden` ones (the home, `/tmp`) that hold programs: those on PATH,
    and this Python's installation (a virtual environment's and the one it was made from),
    shortest first."""
    candidates = [Path(entry) for entry in os.environ.get("PATH", "").split(os.pathsep) if entry]
    candidates += [Path(sys.prefix), Path(sys.base_prefix)]
    found = {path.resolve() for path in candidates if path.is_absolute() and path.is_dir()}
    roots = [root.resolve() for root in hidden]
    inside = (path for path in found if any(path.is_relative_to(root) and path != root for root in roots))
    return sorted(inside, key=lambda p: len(p.parts))


def confined(
    argv: list[str],
    workdir: Path,
    bwrap: str,
    hidden: Sequence[Path],
    keep: Sequence[Path] = (),
    writable: Sequence[Path] = (),
    network: bool = False,
    private_tmp: bool = True,
) -> list[str]:
    """`argv` run by `bwrap` in `workdir`: `/` read-only; the `hidden` folders (the user's home),
    and `/tmp` when `private_tmp`, empty but for the folders in `keep` (read-only); `workdir` and
    `writable` writable; no network unless `network`; every process in it killed when bwrap is."""
    emptied = [*(["/tmp"] if private_tmp else []), *map(str, hidden)]
    kept = [argument for folder in keep for argument in ("--ro-bind", str(folder), str(folder))]
    places = dict.fromkeys(str(path.resolve()) for path in (*writable, workdir))
    bound = [argument for place in places for argument in ("--bind", place, place)]
    return [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        *[argument for folder in emptied for argument in ("--tmpfs", folder)],
        *kept,
        *bound,  # after the tmpfs mounts, so a folder under /tmp or the home stays itself
        "--chdir",
        str(workdir.resolve()),
        *([] if network else ["--unshare-net"]),
        "--unshare-pid",
        "--unshare-ipc",
        "--die-with-parent",
        "--new-session",
        "--",
        *argv,
    ]
