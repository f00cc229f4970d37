"""A Harbor suite's task agent: each task in a fresh container of its image (pinned, or built
once per environment digest; the service `main` of a compose project for a compose task), on the
network each phase asks for (`environments/network.py`: a phase the engine cannot give its
network is infra before anything starts), the inner agent's play inside it under the task's
`[agent] timeout_sec`, then verification as Harbor does it: only now are the task's `tests/`
copied in (as `/tests`), `test.sh` runs under `[verifier] timeout_sec`, and the reward is read
from `/logs/verifier/reward.txt` or `reward.json` as Harbor reads them (`benchmarks/harbor_reward.py`). A
task's `storage_mb` is the engine's to enforce where it can, else checked after the agent and
after the verifier (`environments/storage.py`). The container is removed whatever happens.

The verifier's output, with the failing tests of a CTRF (`ctrf.json`) or JUnit (`*.xml`) report
it leaves in /logs/verifier, is the task's feedback (which the roles read on train tasks only).
An image that will not build, a container that will not start or a verifier that writes no
reward that reads as one raises InfrastructureError quoting the verifier's last lines: never a
score. An agent or a verifier that runs out of time is the task's failure, marked `timeout`.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..benchmarks import Task
from ..benchmarks.harbor import ContainerSuite, HarborTask
from ..benchmarks.harbor_env import exports, resolve_env
from ..benchmarks.harbor_network import Phase
from ..benchmarks.harbor_reward import read_reward
from ..benchmarks.settings import HarborSettings, SuiteSkills
from ..contracts.roles import EnvironmentAgent
from ..core.errors import InfrastructureError
from ..environments.base import NeedsMounts
from ..environments.compose import ComposeProject
from ..environments.container import Container, Limits
from ..environments.images import ImageCache
from ..environments.mounts import Mount
from ..environments.network import EngineNetwork
from ..environments.runtime import Runtime, open_runtime
from ..environments.settings import EnvironmentSettings
from ..environments.storage import StorageLimit, StorageOptRefused
from ..store.traces import FailureKind, Score, Trajectory, cut
from .scorers import junit_score

TESTS_MOUNT = "/tests"
LOGS_DIR = "/logs/verifier"
VERIFIER_OUTPUT_CHARS = 64_000
FEEDBACK_CHARS = 2000
CRASH_LINES = 5
"""The verifier's last lines of output an infrastructure failure quotes."""


@dataclass
class ContainerSetup:
    """What every task's container shares: the engine, the image cache, the workspace it is
    labelled with, the network it can give and the suite's settings of how images are made."""

    runtime: Runtime
    images: ImageCache
    workspace: Path
    settings: EnvironmentSettings
    storage: StorageLimit
    network: EngineNetwork
    harbor: HarborSettings = field(default_factory=HarborSettings)

    def limits(self, task: HarborTask, mounts: tuple[Mount, ...] = ()) -> Limits:
        environment = task.config.environment
        return Limits(
            cpus=environment.cpus,
            memory_mb=environment.memory_mb,
            storage_mb=self.storage.wanted(environment.storage_mb),
            network=self.network.start_network(task.config),
            mounts=mounts,
        )

    async def start(self, task: HarborTask, image: str | None, mounts: tuple[Mount, ...] = ()) -> Container:
        """A fresh container for `task` (the service `main` of its compose project, if it has
        one), its disk limited where the engine can, else without."""
        limits, workdir = self.limits(task, mounts), task.config.environment.workdir
        env = resolve_env(task.config.environment.env, f"{task.id}: [environment.env]")
        if task.compose_file is not None:
            wanted = self.settings.host_network or all(task.config.network(phase).needs_network for phase in Phase)
            internal = not wanted
            limits = replace(limits, storage_mb=None)
            pinned = task.config.environment.docker_image
            return await ComposeProject.start(
                self.runtime, task.compose_file, image, workdir, limits, self.workspace, env, pinned, internal
            )
        if image is None:
            raise InfrastructureError(f"{task.id} has no image: no Dockerfile, docker_image or docker-compose.yaml")
        workdir = workdir or await self.images.workdir(image)
        try:
            container = await Container.start(self.runtime, image, workdir, limits, self.workspace, env)
        except StorageOptRefused:
            self.storage.learn(False)
            limits = replace(limits, storage_mb=None)
            return await Container.start(self.runtime, image, workdir, limits, self.workspace, env)
        if limits.storage_mb:
            self.storage.learn(True)
        return container

    async def image(self, task: HarborTask) -> str | None:
        """The pinned `docker_image` unless `harbor.force_build` (and a Dockerfile to build),
        else the image built from environment/; None for a compose task with neither, whose
        file gives `main` its image."""
        environment = task.config.environment
        if environment.docker_image and not (self.harbor.force_build and task.has_dockerfile):
            return await self.images.pinned(environment.docker_image, environment.build_timeout_sec)
        if not task.has_dockerfile:
            return None
        remove_skills = self.harbor.suite_skills == SuiteSkills.REMOVE
        return await self.images.image(task.context, environment.build_timeout_sec, remove_skills)


def open_setup(
    settings: EnvironmentSettings, state_dir: Path, workspace: Path | None = None, harbor: HarborSettings | None = None
) -> ContainerSetup:
    """The checked engine, and the image cache keeping its build logs in `environment.cache_dir`
    or `state_dir/images/`; containers are labelled with `workspace` (default: the folder
    holding `state_dir`)."""
    log_dir = Path(settings.cache_dir).expanduser() if settings.cache_dir else state_dir / "images"
    runtime = open_runtime(settings.runtime)
    return ContainerSetup(
        runtime,
        ImageCache(runtime, log_dir),
        workspace or state_dir.parent,
        settings,
        StorageLimit(runtime),
        EngineNetwork(runtime, settings.host_network),
        harbor or HarborSettings(),
    )


class HarborTaskAgent:
    """Follows `protocols.TaskAgent` for a Harbor suite, around a `protocols.EnvironmentAgent`."""

    def __init__(self, inner: EnvironmentAgent, suite: ContainerSuite, setup: ContainerSetup):
        self.inner = inner
        self.suite = suite
        self.setup = setup

    async def run(self, task: Task) -> Trajectory:
        harbor = self.suite.task(task)
        self.setup.network.check(harbor.id, harbor.config)
        image = await self.setup.image(harbor)
        mounts = self.inner.mounts() if isinstance(self.inner, NeedsMounts) else ()
        container = await self.setup.start(harbor, image, mounts)
        storage_mb = harbor.config.environment.storage_mb
        try:
            await self.setup.network.enter(container.id, harbor.config, Phase.AGENT)
            timeout_s = harbor.config.agent.timeout_sec
            try:
                trajectory = await asyncio.wait_for(self.inner.play_in(task, container), timeout_s)
            except TimeoutError:
                return Trajectory(
                    task_id=task.id,
                    split=task.split,
                    kind=self.suite.spec.kind,
                    question=task.question,
                    error=f"the agent ran past the task's timeout of {timeout_s:g} s",
                    failure=FailureKind.TIMEOUT,
                )
            over = await self.setup.storage.over(container.id, storage_mb)
            if over is not None:
                return trajectory.model_copy(update={"score": 0.0, "error": over, "feedback": over})
            await self.setup.network.enter(container.id, harbor.config, Phase.VERIFIER)
            score, failure = await verify(container, harbor, self.suite.settings.reward_key)
            over = await self.setup.storage.over(container.id, storage_mb) if failure is None else None
            if over is not None:
                score = Score(value=0.0, feedback=over)
        finally:
            await asyncio.shield(container.close())
        update: dict[str, object] = {"score": score.value, "feedback": score.feedback or None}
        if failure is not None:
            update.update(failure=failure, error=score.feedback)
        elif over is not None:
            update.update(error=over)
        return trajectory.model_copy(update=update)


async def verify(container: Container, task: HarborTask, reward_key: str | None) -> tuple[Score, FailureKind | None]:
    """The reward of the work left in `container`, with the verifier's output as feedback."""
    # emptied, not removed: a compose task may mount a folder of this machine there, as Harbor does
    prepared = await container.run(
        f"rm -rf {TESTS_MOUNT} && mkdir -p {LOGS_DIR} && find {LOGS_DIR} -mindepth 1 -delete", 60, 2000
    )
    if prepared.exit_code != 0:
        raise InfrastructureError(f"cannot prepare {LOGS_DIR} in the container: {prepared.output.strip()}")
    await container.copy_in(task.tests, TESTS_MOUNT)
    timeout_s = task.config.verifier.timeout_sec
    env = resolve_env(task.config.verifier.env, f"{task.id}: [verifier.env]")
    result = await container.run(f"{exports(env)}bash {TESTS_MOUNT}/test.sh", timeout_s, VERIFIER_OUTPUT_CHARS)
    if result.timed_out:
        return Score(value=0.0, feedback=f"the verifier ran past its timeout of {timeout_s:g} s"), FailureKind.TIMEOUT
    with tempfile.TemporaryDirectory(prefix="wikiskill-verifier-") as scratch:
        logs = Path(scratch) / "verifier"
        await container.copy_out(LOGS_DIR, logs)
        try:
            value = read_reward(logs, reward_key, task.id)
        except InfrastructureError as exc:
            raise InfrastructureError(f"{exc}; {crash_report(result.exit_code, result.output)}") from None
        if value >= 1.0:
            return Score(value=value), None
        return Score(value=value, feedback=feedback(result.exit_code, result.output, logs)), None


def crash_report(status: int | None, output: str) -> str:
    """How the verifier ended: its exit status and the last lines of its output (stderr included)."""
    lines = [line for line in output.rstrip().splitlines() if line.strip()][-CRASH_LINES:]
    tail = " | ".join(line.strip()[-300:] for line in lines) or "(no output)"
    return f"the verifier exited with status {status}; its last lines: {tail}"


def feedback(status: int | None, output: str, logs: Path) -> str:
    """The failing tests of a CTRF or JUnit report in the logs, then the end of the verifier's output."""
    failed = _ctrf_failures(logs / "ctrf.json")
    if failed is None:
        report = next(iter(sorted(logs.glob("*.xml"))), None)
        failed = junit_score(report, FEEDBACK_CHARS).feedback if report is not None else None
    head = f"the verifier exited with status {status}"
    tail = output[-FEEDBACK_CHARS // 2 :] if output else "(no output)"
    parts = [head, failed or "", "the end of its output:", tail]
    return cut("\n".join(part for part in parts if part), FEEDBACK_CHARS) or head


def _ctrf_failures(path: Path) -> str | None:
    try:
        tests = json.loads(path.read_text(encoding="utf-8"))["results"]["tests"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    lines = [
        f"FAILED {test.get('name')}: {' '.join(str(test.get('message') or '').split())[:300]}"
        for test in tests
        if isinstance(test, dict) and test.get("status") in ("failed", "error")
    ]
    return "\n".join(lines) or None
