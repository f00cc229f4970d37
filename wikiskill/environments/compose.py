"""A Harbor task with an `environment/docker-compose.yaml`: its services started as one compose
project (`docker compose`, else `docker-compose`), the agent and the verifier in the service
`main`, the sidecars beside it. As Harbor does, the task's file comes after a file of our own
that runs `main` idle on the task's image, and the compose command gets Harbor's variables:
`MAIN_IMAGE_NAME` (the image wikiskill built or the task pinned), `CONTEXT_DIR` (the task's
environment/), `PREBUILT_IMAGE_NAME`, `CPUS`, `MEMORY`, `TEST_DIR`, the log paths inside
(`ENV_VERIFIER_LOGS_PATH`, `ENV_AGENT_LOGS_PATH`, `ENV_ARTIFACTS_PATH`) and folders on this machine
for them (`HOST_*_LOGS_PATH`, `HOST_ARTIFACTS_PATH`), and the task's `[environment.env]`.

Every service is labelled like a single task's container, so Ctrl-C and the next command's sweep
of a killed run's leftovers (`orphans`) find them; the project's name carries the workspace's
digest and the owner's pid, so the sweep also finds its networks and volumes. `close` takes the
whole project down, its volumes included: compose is called once per task, to bring it up."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import yaml

from ..core.errors import InfrastructureError
from .container import PID_LABEL, WORKSPACE_LABEL, Container, Limits, listed, remove, said
from .runtime import Runtime

MAIN = "main"
PROJECT_PREFIX = "wikiskill"
COMPOSE_TIMEOUT_S = 300.0
LOGS = {"VERIFIER_LOGS_PATH": "/logs/verifier", "AGENT_LOGS_PATH": "/logs/agent", "ARTIFACTS_PATH": "/logs/artifacts"}
"""Harbor's log folders inside `main`, each with a folder on this machine (`HOST_<name>`)."""
TEST_DIR = "/tests"
PROJECT_LABEL = "com.docker.compose.project"
SERVICE_LABEL = "com.docker.compose.service"


@functools.cache
def compose_command(runtime: Runtime) -> tuple[str, ...] | None:
    """`docker compose` where the plugin answers, else `docker-compose`; None when neither."""
    plugin = runtime.call("compose", "version")
    if plugin.returncode == 0:
        return tuple(runtime.argv("compose"))
    standalone = shutil.which("docker-compose")
    return (standalone,) if standalone else None


def workspace_tag(workspace: Path) -> str:
    return hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:8]


def project_name(workspace: Path, pid: int) -> str:
    return f"{PROJECT_PREFIX}-{workspace_tag(workspace)}-{pid}-{uuid.uuid4().hex[:8]}"


def project_pid(name: str, workspace: Path) -> str | None:
    """The owner's pid in a project name of `workspace`'s, else None."""
    prefix = f"{PROJECT_PREFIX}-{workspace_tag(workspace)}-"
    if not name.startswith(prefix):
        return None
    return name[len(prefix) :].partition("-")[0]


class ComposeContainer(Container):
    """Follows `base.TaskEnvironment` for the service `main` of a running compose project."""

    project: ComposeProject

    async def close(self) -> None:
        await self.project.down()


class ComposeProject:
    """One task's compose project, from `up` to `down`."""

    def __init__(
        self, runtime: Runtime, command: tuple[str, ...], compose_file: Path, workspace: Path, scratch: Path, name: str
    ):
        self.runtime = runtime
        self.command = command
        self.compose_file = compose_file
        self.workspace = workspace
        self.scratch = scratch
        self.name = name
        self.env: dict[str, str] = {}
        self.files: list[Path] = []

    @classmethod
    async def start(
        cls,
        runtime: Runtime,
        compose_file: Path,
        image: str | None,
        workdir: str | None,
        limits: Limits,
        workspace: Path,
        env: dict[str, str],
        pinned: str | None,
        internal: bool,
    ) -> ComposeContainer:
        """The project up, `main` idle on `image` (None: the image the task's file gives it, built
        by compose if it must be); its network `internal` (no way out but to the other services)
        unless every phase of the task needs the network."""
        command = await asyncio.to_thread(compose_command, runtime)
        if command is None:
            raise InfrastructureError(
                f"{compose_file} needs docker compose: install the plugin or `apt-get install docker-compose`"
            )
        scratch = Path(tempfile.mkdtemp(prefix="wikiskill-compose-"))
        project = cls(runtime, command, compose_file, workspace, scratch, project_name(workspace, os.getpid()))
        try:
            project.prepare(image, workdir, limits, env, pinned, internal)
            await project.call("up", "-d", *(["--no-build"] if image else []))
            services = await asyncio.to_thread(project.services)
            listed(runtime, list(services))
            main = next((container for container, service in services.items() if service == MAIN), None)
            if main is None:
                raise InfrastructureError(f"{compose_file}: the service {MAIN} did not start")
            container = await ComposeContainer.attach(runtime, main, workdir, image or MAIN)
        except BaseException:
            await asyncio.shield(project.down())
            raise
        assert isinstance(container, ComposeContainer)
        container.project = project
        return container

    def prepare(
        self,
        image: str | None,
        workdir: str | None,
        limits: Limits,
        env: dict[str, str],
        pinned: str | None,
        internal: bool,
    ) -> None:
        """Our compose file (before the task's) and the variables the files may use."""
        try:
            services = yaml.safe_load(self.compose_file.read_text(encoding="utf-8")).get("services") or {}
        except (OSError, yaml.YAMLError, AttributeError) as exc:
            reason = " ".join(str(exc).split())
            raise InfrastructureError(f"{self.compose_file} is not a compose file: {reason}") from None
        labels = {WORKSPACE_LABEL: str(self.workspace.resolve()), PID_LABEL: str(os.getpid())}
        main: dict[str, object] = {"command": ["sh", "-c", "sleep infinity"], "labels": labels, "environment": env}
        if image:
            main["image"] = image
        if workdir:
            main["working_dir"] = workdir
        if limits.cpus:
            main["cpus"] = limits.cpus
        if limits.memory_mb:
            main["mem_limit"] = f"{limits.memory_mb}m"
        if limits.mounts:
            main["volumes"] = [f"{mount.source}:{mount.source}:ro" for mount in limits.mounts]
        ours = {
            "services": {MAIN: main, **{name: {"labels": labels} for name in services if name != MAIN}},
            "networks": {"default": {"internal": internal}},
        }
        base = self.scratch / "wikiskill-compose.json"
        base.write_text(json.dumps(ours), encoding="utf-8")
        self.files = [base, self.compose_file]
        variables = {
            "MAIN_IMAGE_NAME": image or f"{self.name}-{MAIN}",
            "CONTEXT_DIR": str(self.compose_file.parent.resolve()),
            "CPUS": f"{limits.cpus or 1:g}",
            "MEMORY": f"{limits.memory_mb}M" if limits.memory_mb else "2048M",
            "TEST_DIR": TEST_DIR,
            **({"PREBUILT_IMAGE_NAME": pinned} if pinned else {}),
        }
        for name, inside in LOGS.items():
            host = self.scratch / name.lower()
            host.mkdir()
            variables[f"HOST_{name}"], variables[f"ENV_{name}"] = str(host), inside
        self.env = {**os.environ, **variables, **env}

    async def call(self, *arguments: str) -> subprocess.CompletedProcess[str]:
        argv = [*self.command, "-p", self.name, "--project-directory", str(self.compose_file.parent)]
        for path in self.files:
            argv += ["-f", str(path)]
        try:
            done = await asyncio.to_thread(
                subprocess.run,
                [*argv, *arguments],
                capture_output=True,
                text=True,
                env=self.env,
                stdin=subprocess.DEVNULL,
                timeout=COMPOSE_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            raise InfrastructureError(
                f"`compose {arguments[0]}` of {self.compose_file} took over {COMPOSE_TIMEOUT_S:g} s"
            ) from None
        if done.returncode != 0:
            raise InfrastructureError(f"`compose {arguments[0]}` of {self.compose_file} failed: {said(done)}")
        return done

    def services(self) -> dict[str, str]:
        """The project's containers and the service of each, from the engine's labels."""
        listed = self.runtime.call(
            "ps",
            "-a",
            "--filter",
            f"label={PROJECT_LABEL}={self.name}",
            "--format",
            f'{{{{.ID}}}} {{{{.Label "{SERVICE_LABEL}"}}}}',
        )
        return dict(line.split(" ", 1) for line in listed.stdout.splitlines() if " " in line)

    async def down(self) -> None:
        """Every container, network and volume of the project gone: what `compose down -v`
        does, through the engine's own CLI by compose's labels (a compose call costs a second
        or more)."""
        await asyncio.to_thread(remove_project, self.runtime, self.name)
        shutil.rmtree(self.scratch, ignore_errors=True)


def remove_project(runtime: Runtime, name: str) -> None:
    """Remove the project's containers, then its networks and volumes, by compose's own label."""
    label = f"label={PROJECT_LABEL}={name}"
    remove(runtime, runtime.call("ps", "-aq", "--filter", label).stdout.split())
    for kind in ("network", "volume"):
        found = runtime.call(kind, "ls", "-q", "--filter", label).stdout.split()
        if found:
            runtime.call(kind, "rm", *found)
