"""A task's container as its environment (`Container`): started fresh from the task's image with
its cpu and memory limits, no network unless the task allows the internet (or
`environment.host_network`), labelled with the workspace and the owner's pid, and removed when
the task is done. Commands run with `exec` in the task's workdir under coreutils' `timeout`,
which kills the command's whole process group when it runs out of time.

Every container this process started is listed until it is removed: Ctrl-C removes them at once
(a SIGINT hook starts `remove_live` in a thread, then hands the signal on, so the interrupted
command unwinds as before), and any other way out of the process short of kill -9 removes
what is left at exit; what a kill -9 leaves is swept by the next command (`orphans`)."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import posixpath
import signal
import subprocess
import tarfile
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import BinaryIO

from ..core.errors import InfrastructureError
from .mounts import Mount
from .output import OutputBudget, ShellResult
from .runtime import Runtime
from .storage import StorageOptRefused, refused, storage_argv

WORKSPACE_LABEL = "wikiskill.workspace"
PID_LABEL = "wikiskill.pid"
READ_CHUNK = 65536
EXEC_GRACE_S = 10.0
"""How long past a command's limit the exec may take to report the kill before it is abandoned."""
START_TIMEOUT_S = 120.0
COPY_TIMEOUT_S = 300.0

_live: dict[str, Runtime] = {}
_hooked = False
_interrupted = threading.Event()


@dataclass(frozen=True)
class Limits:
    """What a task's container may use."""

    cpus: float | None = None
    memory_mb: int | None = None
    storage_mb: int | None = None
    """Passed as `--storage-opt size=`, which not every engine takes (`storage.py`)."""
    network: str = "none"
    """`none`, `host`, or `bridge` (a task that allows the internet)."""
    mounts: tuple[Mount, ...] = ()
    """This machine's paths it sees read-only (a coding-agent CLI's install)."""


class Container:
    """Follows `base.TaskEnvironment` for one running container."""

    sandboxed = False

    def __init__(self, runtime: Runtime, container_id: str, workdir: str):
        self.runtime = runtime
        self.id = container_id
        self.workdir = workdir

    @classmethod
    async def start(
        cls,
        runtime: Runtime,
        image: str,
        workdir: str,
        limits: Limits,
        workspace: Path,
        env: dict[str, str] | None = None,
    ) -> Container:
        """A fresh container of `image`, left idle (`sleep infinity`) for commands to be exec'd
        in `workdir`, with `env` in every command's environment."""
        name = f"wikiskill-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        argv = [
            "run",
            "-d",
            "--name",
            name,
            "--label",
            f"{WORKSPACE_LABEL}={workspace.resolve()}",
            "--label",
            f"{PID_LABEL}={os.getpid()}",
            "--network",
            limits.network,
            "--entrypoint",
            "sleep",
        ]
        if limits.cpus:
            argv += ["--cpus", f"{limits.cpus:g}"]
        if limits.memory_mb:
            argv += ["--memory", f"{limits.memory_mb}m"]
        argv += storage_argv(limits.storage_mb)
        argv += ["-w", workdir]  # the engine makes it when the image lacks it
        for variable, value in (env or {}).items():
            argv += ["-e", f"{variable}={value}"]
        for mount in limits.mounts:
            argv += mount.argv()
        _hook_interrupt()
        started = await asyncio.to_thread(_run_listed, runtime, name, [*argv, image, "infinity"])
        if limits.storage_mb and refused(started):
            raise StorageOptRefused(f"{runtime.kind} cannot limit a container's disk: {said(started)}")
        if started.returncode != 0:
            raise InfrastructureError(f"the container of {image} would not start: {said(started)}")
        return cls(runtime, name, workdir)

    @classmethod
    async def attach(cls, runtime: Runtime, container_id: str, workdir: str | None, image: str) -> Container:
        """The running container `container_id`, its workdir (the image's where unset) made."""
        found = (
            workdir
            or (await runtime.acall("inspect", "--format", "{{.Config.WorkingDir}}", container_id)).stdout.strip()
            or "/"
        )
        container = cls(runtime, container_id, found)
        made = await container.run(f"mkdir -p {_quote(found)}", 30, 2000)
        if made.exit_code != 0:
            await container.close()
            raise InfrastructureError(f"the container of {image} has no workdir {found}: {made.output.strip()}")
        return container

    async def run(self, command: str, timeout_s: float, output_chars: int) -> ShellResult:
        argv = self.runtime.argv(
            "exec", "-w", self.workdir, self.id, "timeout", "-s", "KILL", f"{timeout_s:g}", "bash", "-c", command
        )
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        budget = OutputBudget(output_chars)
        began = time.monotonic()

        async def drain() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(READ_CHUNK):
                budget.add(chunk)
            await process.wait()

        try:
            await asyncio.wait_for(drain(), timeout_s + EXEC_GRACE_S)
        except TimeoutError:
            _kill(process)
            await process.wait()
            return ShellResult(None, budget.text(), timed_out=True)
        finally:
            if process.returncode is None:
                _kill(process)
        if process.returncode == 137 and time.monotonic() - began >= timeout_s:
            return ShellResult(None, budget.text(), timed_out=True)
        return ShellResult(process.returncode, budget.text())

    async def copy_in(self, source: Path, destination: str) -> None:
        """One `cp` of a tar stream holding `source` at its path in the container: the engine makes
        the missing folders above it and leaves those that exist as they are."""
        with tempfile.TemporaryFile() as archive:
            await asyncio.to_thread(_archive, source, self._path(destination), archive)
            archive.seek(0)
            await self._must("cp", "-", f"{self.id}:/", stdin=archive)

    async def copy_out(self, source: str, destination: Path) -> None:
        destination.parent.mkdir(parents=True, exist_ok=True)
        await self._must("cp", f"{self.id}:{self._path(source)}", str(destination))

    async def close(self) -> None:
        await asyncio.to_thread(remove, self.runtime, [self.id])

    def _path(self, path: str) -> str:
        return posixpath.join(self.workdir, path)

    async def _must(self, *arguments: str, stdin: BinaryIO | None = None) -> None:
        done = await self.runtime.acall(*arguments, timeout_s=COPY_TIMEOUT_S, stdin=stdin)
        if done.returncode != 0:
            raise InfrastructureError(
                f"`{self.runtime.kind} {arguments[0]}` failed in container {self.id[:12]}: {said(done)}"
            )


def _archive(source: Path, target: str, archive: BinaryIO) -> None:
    """Write a tar of the file or folder `source` as the absolute path `target`, owned by root."""

    def as_root(member: tarfile.TarInfo) -> tarfile.TarInfo:
        member.uid = member.gid = 0
        member.uname = member.gname = "root"
        return member

    with tarfile.open(fileobj=archive, mode="w") as tar:
        tar.add(source, arcname=target.lstrip("/"), filter=as_root)


def _run_listed(runtime: Runtime, name: str, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """`run` the container `name`, listed as live before it exists, so that an interrupt at any
    moment of its start removes it (the check after it closes the race with the hook)."""
    _live[name] = runtime
    started = runtime.call(*argv, timeout_s=START_TIMEOUT_S)
    if started.returncode != 0:
        _live.pop(name, None)
    elif _interrupted.is_set():
        remove(runtime, [name])
        raise InfrastructureError("interrupted while the container started")
    return started


def remove(runtime: Runtime, container_ids: list[str]) -> None:
    """Remove the containers at once, whatever runs in them (`rm -f` kills first)."""
    if not container_ids:
        return
    subprocess.run(
        runtime.argv("rm", "-f", *container_ids),
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=START_TIMEOUT_S,
        check=False,
    )
    for container_id in container_ids:
        _live.pop(container_id, None)


def remove_live() -> None:
    """Remove every container this process started and has not removed yet."""
    by_runtime: dict[Runtime, list[str]] = {}
    for container_id, runtime in list(_live.items()):
        by_runtime.setdefault(runtime, []).append(container_id)
    for runtime, ids in by_runtime.items():
        remove(runtime, ids)


def _hook_interrupt() -> None:
    """On SIGINT, start removing the live containers, then let the previous handler act."""
    global _hooked
    if _hooked or threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGINT)

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        _interrupted.set()
        threading.Thread(target=remove_live, name="wikiskill-containers", daemon=True).start()
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_interrupt)
    _hooked = True


def listed(runtime: Runtime, container_ids: list[str]) -> None:
    """Count containers started by another command (compose) as this process's live ones."""
    for container_id in container_ids:
        _live[container_id] = runtime


def said(done: subprocess.CompletedProcess[str]) -> str:
    return " ".join((done.stderr or done.stdout).split())[:300] or f"exit {done.returncode}"


def _quote(path: str) -> str:
    return "'" + path.replace("'", "'\\''") + "'"


atexit.register(remove_live)


def _kill(process: asyncio.subprocess.Process) -> None:
    """Kill `process`, which may have ended since it was last looked at (on a busy machine, just as
    its time ran out)."""
    with contextlib.suppress(ProcessLookupError):
        process.kill()
