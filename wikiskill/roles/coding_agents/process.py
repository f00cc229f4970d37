"""Running a CLI as a child process with a wall-time limit, its whole process tree killed after.

The CLI starts a new session, so it and everything it starts (shells, servers, their children)
share one process group, unless they leave it on purpose. When the CLI exits, or its time is up,
or the task is cancelled, the group is sent SIGKILL: nothing it started outlives the task.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from dataclasses import dataclass

DRAIN_S = 5.0
"""How long output is still read after the group was killed (a process that left the group may
hold the pipes open; it is not waited for longer)."""


@dataclass(frozen=True)
class Finished:
    stdout: str
    stderr: str
    returncode: int | None
    timed_out: bool
    seconds: float


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def _read(stream: asyncio.StreamReader, sink: list[bytes]) -> None:
    while chunk := await stream.read(65536):
        sink.append(chunk)


async def run_limited(argv: list[str], cwd: str, env: dict[str, str], timeout_s: float) -> Finished:
    """Run `argv` to its end or for `timeout_s` seconds, whichever is first."""
    start = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    out: list[bytes] = []
    err: list[bytes] = []
    assert process.stdout is not None and process.stderr is not None
    readers = asyncio.gather(_read(process.stdout, out), _read(process.stderr, err))
    timed_out = False
    try:
        await asyncio.wait_for(process.wait(), timeout_s)
    except TimeoutError:
        timed_out = True
    except BaseException:  # cancelled: the task is abandoned, and so is its process tree
        kill_group(process.pid)
        readers.cancel()
        raise
    kill_group(process.pid)
    if process.returncode is None:
        await process.wait()
    try:
        await asyncio.wait_for(readers, DRAIN_S)
    except TimeoutError:
        pass
    return Finished(
        stdout=b"".join(out).decode("utf-8", "replace"),
        stderr=b"".join(err).decode("utf-8", "replace"),
        returncode=None if timed_out else process.returncode,
        timed_out=timed_out,
        seconds=time.monotonic() - start,
    )
