"""One shell command of the workdir agent: run in the task's working directory (under bubblewrap
when it is installed), killed with its whole process group when it runs out of time (and what it
left running in that group killed when it ends), its output cut to a budget of characters (the
head and the tail, saying how much was cut between them).

A command sees only PATH, LANG, LC_ALL and TERM from wikiskill's environment (never an API key),
and HOME: under bubblewrap an empty folder but for its program folders, else the user's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from .bubblewrap import bwrap_path, confined, program_folders

PASSED_ENV = ("PATH", "LANG", "LC_ALL", "TERM")
READ_CHUNK = 65536


@dataclass(frozen=True)
class ShellResult:
    exit_code: int | None
    """None when the command was killed for running out of time."""
    output: str
    """stdout and stderr together, cut to the budget."""
    timed_out: bool = False

    def render(self, timeout_s: float) -> str:
        """The tool result the model reads."""
        status = (f"killed after {timeout_s:g} s (the command's time limit)" if self.timed_out
                  else f"exit code {self.exit_code}")
        return f"{status}\n{self.output}" if self.output else f"{status}\n(no output)"


class _Budget:
    """Keeps the first and last `chars // 2` bytes of a stream of any length."""

    def __init__(self, chars: int):
        self.half = max(1, chars // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        del self.tail[:-self.half]

    def text(self) -> str:
        cut = self.total - len(self.head) - len(self.tail)
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if cut <= 0:
            return head + tail
        return f"{head}\n[... {cut} bytes of output cut; the first and last {self.half} are shown ...]\n{tail}"


def _environment(home: Path) -> dict[str, str]:
    env = {key: os.environ[key] for key in PASSED_ENV if key in os.environ}
    return {**env, "HOME": str(home)}


async def run_shell(command: str, workdir: Path, timeout_s: float, output_chars: int,
                    sandbox: bool = True) -> ShellResult:
    """Run `command` with bash in `workdir`; `sandbox`: under bubblewrap when it is installed."""
    home = Path.home().resolve()
    argv = ["bash", "-c", command]
    bwrap = bwrap_path() if sandbox else None
    if bwrap:
        argv = confined(argv, workdir, bwrap, [home], program_folders([home, Path("/tmp")]))
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=workdir, env=_environment(home), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True)
    budget = _Budget(output_chars)

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
