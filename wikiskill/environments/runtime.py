"""The container engine's command line (`docker`, or `podman` with the same arguments): found on
PATH and its daemon asked once before anything is built, each refusal one line saying what to do.
No HTTP of our own: every call is the engine's CLI in a child process."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from dataclasses import dataclass
from typing import BinaryIO

from ..core.errors import ConfigError, InfrastructureError
from .settings import ContainerRuntime

PROBE_TIMEOUT_S = 20.0
PACKAGE = {ContainerRuntime.DOCKER: "docker.io", ContainerRuntime.PODMAN: "podman"}
"""The Debian package of each engine's client."""
PROBE = {
    ContainerRuntime.DOCKER: ("info", "--format", "{{.ServerVersion}}"),
    ContainerRuntime.PODMAN: ("info", "--format", "{{.Version.Version}}"),
}
"""A call that fails unless the engine (Docker's daemon, Podman's service) answers."""
START = {
    ContainerRuntime.DOCKER: "start it with `sudo systemctl start docker` (or `sudo dockerd &`)",
    ContainerRuntime.PODMAN: "check `podman info`",
}


@dataclass(frozen=True)
class Runtime:
    """The engine's executable and its name."""

    kind: ContainerRuntime
    executable: str

    def argv(self, *arguments: str) -> list[str]:
        return [self.executable, *arguments]

    def call(
        self, *arguments: str, timeout_s: float = PROBE_TIMEOUT_S, stdin: BinaryIO | None = None
    ) -> subprocess.CompletedProcess[str]:
        """One blocking call, reading `stdin` if given; an engine that does not answer in time is
        an infrastructure failure."""
        try:
            return subprocess.run(
                self.argv(*arguments),
                capture_output=True,
                text=True,
                timeout=timeout_s,
                stdin=subprocess.DEVNULL if stdin is None else stdin,
            )
        except subprocess.TimeoutExpired as exc:
            raise InfrastructureError(f"`{self.kind} {arguments[0]}` did not answer in {timeout_s:g} s") from exc

    async def acall(
        self, *arguments: str, timeout_s: float = PROBE_TIMEOUT_S, stdin: BinaryIO | None = None
    ) -> subprocess.CompletedProcess[str]:
        return await asyncio.to_thread(self.call, *arguments, timeout_s=timeout_s, stdin=stdin)


def open_runtime(kind: ContainerRuntime) -> Runtime:
    """The engine, checked: installed, and its daemon answering; a ConfigError in one line if not."""
    executable = shutil.which(kind.value)
    if executable is None:
        raise ConfigError(
            f"environment.runtime: {kind} is not installed (apt-get install {PACKAGE[kind]}); a Harbor suite "
            "runs each task in a container"
        )
    runtime = Runtime(kind, executable)
    try:
        probe = runtime.call(*PROBE[kind])
    except InfrastructureError as exc:
        raise ConfigError(f"the {kind} daemon does not answer: {START[kind]}") from exc
    if probe.returncode != 0:
        said = " ".join(probe.stderr.split())[:200]
        raise ConfigError(f"the {kind} daemon is not running ({said}): {START[kind]}")
    return runtime
