"""A coding-agent CLI inside a Harbor task's container (`ContainerCliAgent`, a
`protocols.EnvironmentAgent`).

The CLI is this machine's install, mounted read-only (`host_install`); for each task its private
HOME (with the preset's settings) goes to a folder of its own under `/tmp` in the container and
the skills into its skills folder under the task's workdir (`.qwen/skills`), both copied in for
that task only and removed again before the verifier runs; the image never holds them. The CLI
runs with `exec` in the workdir, its environment read from a file (the key never shows in a
process listing) and its whole process group killed by `timeout` when `agent.timeout_s` is up.
Its streamed transcript is read as on this machine (`agent.read_back`).

The CLI calls the model from inside the container, so the container needs a route to the
endpoint: one on this machine's loopback is reached only over the host's network
(`environment.host_network`), and a task with no network (`allow_internet = false`) reaches no
endpoint at all without it; `check_model_network` refuses both in one line.
"""

from __future__ import annotations

import ipaddress
import os
import posixpath
import shlex
import tempfile
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlparse

from ...benchmarks import Benchmark, Task
from ...benchmarks.harbor import HarborTask
from ...benchmarks.harbor_network import Phase
from ...contracts.coding_agent import CliPreset, CliRun
from ...contracts.roles import AgentParts
from ...core.errors import ConfigError, InfrastructureError
from ...core.prompts import render
from ...environments.base import TaskEnvironment
from ...environments.container import Container
from ...environments.mounts import Mount
from ...environments.settings import EnvironmentSettings
from ...knowledge.skills import Skill, write_skill_folders
from ...store.traces import Trajectory
from ..settings import AgentSettings, Role, RoleSettings
from .cli_agent import api_key, read_back
from .host_install import host_install
from .presets import make_preset
from .process import Finished, run_limited

PRIVATE_ROOT = "/tmp/wikiskill-cli-"
NO_NODE = 90
"""The setup script's exit status when the mounted `node` does not start in the image."""
EXEC_GRACE_S = 10.0
SETUP_TIMEOUT_S = 60.0
KILLED = 137


def loopback(api_base: str | None) -> bool:
    """Whether the endpoint is on this machine's loopback (`127.0.0.1`, `localhost`, `::1`)."""
    host = urlparse(api_base or "").hostname
    if host is None:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_model_network(
    environment: EnvironmentSettings, api_base: str | None, runner: str, tasks: Iterable[HarborTask] = ()
) -> None:
    """Refuse in one line a CLI whose container cannot reach its model: an endpoint on this
    machine's loopback, or `tasks` without a network, unless `environment.host_network`."""
    if environment.host_network:
        return
    if loopback(api_base):
        raise ConfigError(
            f"agent.runner: {runner} calls {api_base} from inside each task's container, which "
            "reaches this machine's loopback only over the host's network: set "
            "environment.host_network: true (the container then shares the host's network, "
            "allow_internet = false included), or use an endpoint the container can reach"
        )
    offline = sorted(task.id for task in tasks if not task.config.network(Phase.AGENT).needs_network)
    if offline:
        raise ConfigError(
            f"agent.runner: {runner} calls the model from inside each task's container, and "
            f"{len(offline)} task(s) have no network (network_mode = 'no-network', e.g. {offline[0]}): "
            "set environment.host_network: true"
        )


class ContainerCliAgent:
    """Follows `protocols.EnvironmentAgent` and `environments.base.NeedsMounts`."""

    def __init__(
        self,
        preset: CliPreset,
        benchmark: Benchmark,
        skills: Sequence[Skill],
        settings: AgentSettings,
        model: RoleSettings,
    ):
        self.preset = preset
        self.install = host_install(preset)
        self.benchmark = benchmark
        self.skills = list(skills)
        self.settings = settings
        self.model = model

    @classmethod
    def from_parts(cls, parts: AgentParts) -> ContainerCliAgent:
        """The CLI preset `agent.runner` names, with the agent's settings (whether its model can be
        reached from the containers was checked before the run: `run/preflight.py`)."""
        agent = parts.config.agent
        return cls(make_preset(agent), parts.benchmark, parts.skills, agent, parts.config.role(Role.AGENT))

    def mounts(self) -> tuple[Mount, ...]:
        return self.install.mounts()

    async def play_in(self, task: Task, environment: TaskEnvironment) -> Trajectory:
        if not isinstance(environment, Container):
            raise ConfigError(f"agent.runner: {self.preset.name} runs inside a task's container only")
        private = f"{PRIVATE_ROOT}{uuid.uuid4().hex[:12]}"
        model = self.model.model or ""
        run = CliRun(
            prompt=render("agent_cli", question=task.question, answer_tags=False),
            workdir=Path(environment.workdir),
            home=Path(private, "home"),
            skills=tuple(skill.name for skill in self.skills),
            model=model,
            api_base=self.model.api_base,
            api_key=api_key(model),
            max_turns=self.settings.max_steps,
        )
        with tempfile.TemporaryDirectory(prefix="wikiskill-cli-") as scratch:
            staged = Path(scratch, "private")
            self.preset.prepare_home(replace(run, home=staged / "home"))
            (staged / "home").mkdir(parents=True, exist_ok=True)
            (staged / "skills").mkdir()
            write_skill_folders(self.skills, staged / "skills")
            await environment.copy_in(staged, private)
            created = await self._set_up(environment, task, private)
            try:
                finished = await self._run(environment, run, Path(scratch, "env"), private)
            finally:
                await environment.run(
                    f"rm -rf {shlex.quote(private)} {shlex.quote(created) if created else ''}", SETUP_TIMEOUT_S, 2000
                )
        return read_back(task, self.benchmark.spec.kind, run, self.preset, finished, self.settings, self.preset.program)

    async def _set_up(self, container: Container, task: Task, private: str) -> str | None:
        """Check that the mounted node starts, and copy the skills into the skills folder; the
        outermost folder of it that did not exist (to remove after), or None."""
        skills_dir = shlex.quote(posixpath.join(container.workdir, self.preset.skills_folder))
        node, root = shlex.quote(self.install.node), shlex.quote(private)
        parts = self.preset.skills_folder.split("/")
        folders = " ".join(shlex.quote(posixpath.join(container.workdir, *parts[:n])) for n in range(1, len(parts) + 1))
        script = (
            f"{node} --version >/dev/null 2>&1 || {{ {node} --version 2>&1 | head -c 300; exit {NO_NODE}; }}\n"
            f"mkdir -p {root}/tmp\n"
            f'for p in {folders}; do [ -e "$p" ] || {{ printf \'%s\' "$p"; break; }}; done\n'
            f"mkdir -p {skills_dir} && cp -R {root}/skills/. {skills_dir}/\n"
        )
        done = await container.run(script, SETUP_TIMEOUT_S, 2000)
        if done.exit_code == NO_NODE:
            said = " ".join(done.output.split()) or "it cannot be run"
            raise ConfigError(
                f"agent.runner: {self.preset.name} cannot start in {task.id}'s container: this "
                f"machine's node ({self.install.node}, mounted read-only) fails there ({said}); "
                "the mounted install needs a glibc image such as Debian's"
            )
        if done.exit_code != 0:
            raise InfrastructureError(f"cannot copy the skills into {task.id}'s container: {done.output.strip()}")
        return done.output.strip() or None

    async def _run(self, container: Container, run: CliRun, env_file: Path, private: str) -> Finished:
        """The CLI run to its end inside the container, killed with its group after `agent.timeout_s`."""
        variables = {
            "PATH": self.install.path_variable(),
            "HOME": str(run.home),
            "TERM": "dumb",
            "LANG": "C.UTF-8",
            "TMPDIR": f"{private}/tmp",
            **self.preset.environment(run),
        }
        if any("\n" in value for value in variables.values()):
            raise ConfigError(f"agent.runner: {self.preset.name}: an environment value holds a line break")
        env_file.write_text("".join(f"{name}={value}\n" for name, value in variables.items()), encoding="utf-8")
        env_file.chmod(0o600)
        timeout_s = self.settings.timeout_s
        argv = container.runtime.argv(
            "exec",
            "-w",
            container.workdir,
            "--env-file",
            str(env_file),
            container.id,
            "timeout",
            "-s",
            "KILL",
            f"{timeout_s:g}",
            *self.install.command,
            *self.preset.argv(run)[1:],
        )
        finished = await run_limited(argv, str(env_file.parent), dict(os.environ), timeout_s + EXEC_GRACE_S)
        if finished.returncode == KILLED and finished.seconds >= timeout_s:
            return replace(finished, returncode=None, timed_out=True)
        return finished
