"""`agent.sandbox: bwrap`: the CLI under bubblewrap (`environments/bubblewrap.py` builds the command).

Inside, the whole file system is mounted read-only; the task's folder (workdir, private HOME,
TMPDIR) is the one writable place; the user's home is empty, except the PATH folders
and the npm package folder of the CLI when they lie inside the home, mounted back read-only so
the CLI can start. The CLI gets its own PID namespace and dies with its parent. The network is
shared: the model endpoint must stay reachable (a loopback server on this machine is not
reachable from a new network namespace), so the sandbox does not cut the CLI off from other
hosts.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from ...core.errors import ConfigError
from ...environments.bubblewrap import bwrap_path, confined
from ..settings import Sandbox
from .isolation import TaskFolder


def require_bwrap() -> str:
    """Where `bwrap` is; a ConfigError in one line when bubblewrap is not installed."""
    found = bwrap_path()
    if found is None:
        raise ConfigError("agent.sandbox: bwrap is not installed (apt-get install bubblewrap), or use sandbox: none")
    return found


def hidden_homes() -> list[Path]:
    """The user's home folders: $HOME and the password database's entry."""
    homes = {Path(os.environ["HOME"]).resolve()} if os.environ.get("HOME") else set()
    try:
        homes.add(Path(pwd.getpwuid(os.getuid()).pw_dir).resolve())
    except KeyError:
        pass
    return sorted(home for home in homes if home != Path("/"))


def _inside(path: Path, homes: list[Path]) -> bool:
    return any(path.is_relative_to(home) for home in homes)


def _visible_again(program: str, path_variable: str, homes: list[Path]) -> list[Path]:
    """Folders under a hidden home the CLI needs to start: the PATH entries there, and the
    outermost `node_modules` holding the program's real file (or the folder of that file)."""
    needed = [Path(entry).resolve() for entry in path_variable.split(os.pathsep) if entry]
    real = Path(os.path.realpath(program))
    modules = [parent for parent in real.parents if parent.name == "node_modules"]
    needed.append(modules[-1] if modules else real.parent)
    return sorted({path for path in needed if path.is_dir() and _inside(path, homes)})


def sandboxed(argv: list[str], folder: TaskFolder, sandbox: Sandbox, path_variable: str) -> list[str]:
    """`argv` as it runs under `sandbox`; `none` leaves it as it is."""
    if sandbox is Sandbox.NONE:
        return argv
    homes = hidden_homes()
    return confined(
        argv,
        folder.workdir,
        require_bwrap(),
        homes,
        _visible_again(argv[0], path_variable, homes),
        writable=[folder.root],
        network=True,
        private_tmp=False,
    )
