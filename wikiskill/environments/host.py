"""A task's folder on this machine as its environment (`HostFolder`): each shell command runs in
the task's working directory (under bubblewrap when it is installed), killed with its whole
process group when it runs out of time (and what it left running in that group killed when it
ends), its output cut to a budget of characters (`output.OutputBudget`).

A command sees only PATH, LANG, LC_ALL and TERM from wikiskill's environment (never an API key),
and HOME: under bubblewrap an empty folder but for its program folders, else the user's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from pathlib import Path

from .bubblewrap import bwrap_path, confined, program_folders
from .output import OutputBudget, ShellResult

PASSED_ENV = ("PATH", "LANG", "LC_ALL", "TERM")
READ_CHUNK = 65536


def _environment(home: Path) -> dict[str, str]:
    env = {key: os.environ[key] for key in PASSED_ENV if key in os.environ}
    return {**env, "HOME": str(home)}


async def run_shell(
    command: str, workdir: Path, timeout_s: float, output_chars: int, sandbox: bool = True
) -> ShellResult:
    """Run `command` with bash in `workdir`; `sandbox`: under bubblewrap when it is installed."""
    home = Path.home().resolve()
    argv = ["bash", "-c", command]
    bwrap = bwrap_path() if sandbox else None
    if bwrap:
        argv = confined(argv, workdir, bwrap, [home], program_folders([home, Path("/tmp")]))
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=workdir,
        env=_environment(home),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    budget = OutputBudget(output_chars)

    async def drain() -> None:
        assert process.stdout is not None
        while chunk := await process.stdout.read(READ_CHUNK):
            budget.add(chunk)
        await process.wait()

    try:
        await asyncio.wait_for(drain(), timeout_s)
    except TimeoutError:
        _kill_group(process.pid)
        await process.wait()
        return ShellResult(None, budget.text(), timed_out=True)
    finally:  # what the command left running (or all of it, when its task is cancelled) goes with it
        _kill_group(process.pid)
    return ShellResult(process.returncode, budget.text())


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class HostFolder:
    """Follows `base.TaskEnvironment` for a working directory on this machine (the caller made it
    and removes it: closing leaves it be)."""

    def __init__(self, workdir: Path, sandbox: bool = True):
        self.path = workdir
        self.workdir = str(workdir)
        self.sandbox = sandbox
        self.sandboxed = sandbox and bwrap_path() is not None

    async def run(self, command: str, timeout_s: float, output_chars: int) -> ShellResult:
        return await run_shell(command, self.path, timeout_s, output_chars, self.sandbox)

    async def copy_in(self, source: Path, destination: str) -> None:
        await asyncio.to_thread(_copy, source, self.path / destination)

    async def copy_out(self, source: str, destination: Path) -> None:
        await asyncio.to_thread(_copy, self.path / source, destination)

    async def close(self) -> None:
        """Nothing to remove: the folder is its maker's."""


def _copy(source: Path, destination: Path) -> None:
    destination.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, destination, symlinks=True, dirs_exist_ok=True)
    else:
        shutil.copy2(source, destination)
