"""What network a task's container gets in each phase, and what this engine can give. A phase
that needs the network on an engine with no bridge network (dockerd `--bridge=none`), or an
allowlist, which no engine here can enforce, is an infrastructure failure saying so before any
container starts: never a task that fails for want of the network, never more network than the
task asked for. `environment.host_network` is the exception a person chose: every phase then
shares the host's network.

A container whose phases differ starts on the bridge and is disconnected from it for each phase
without the network (and connected again after); one whose phases agree starts as they say."""

from __future__ import annotations

import threading

from ..benchmarks.harbor import HarborTaskConfig
from ..benchmarks.harbor_network import NetworkMode, Phase
from ..core.errors import InfrastructureError
from .runtime import Runtime

BRIDGE = "bridge"
NONE = "none"
HOST = "host"


class EngineNetwork:
    """Whether the engine has a bridge network, asked once per command."""

    def __init__(self, runtime: Runtime, host_network: bool = False):
        self.runtime = runtime
        self.host_network = host_network
        self._bridge: bool | None = None
        self._lock = threading.Lock()

    @property
    def has_bridge(self) -> bool:
        with self._lock:
            if self._bridge is None:
                self._bridge = self.runtime.call("network", "inspect", BRIDGE).returncode == 0
            return self._bridge

    def refusal(self, task_id: str, config: HarborTaskConfig) -> str | None:
        """Why the engine cannot give the task the network it asks for, or None."""
        if self.host_network:
            return None
        for phase in Phase:
            policy = config.network(phase)
            if policy.mode == NetworkMode.ALLOWLIST:
                return (
                    f"{task_id}: its {phase} phase allows only {', '.join(policy.allowed_hosts)}; "
                    f"wikiskill cannot enforce an allowlist on {self.runtime.kind} (it would be the "
                    "whole network or none)"
                )
            if policy.needs_network and not self.has_bridge:
                return (
                    f"{task_id}: its {phase} phase needs the network ({policy}); this engine has no "
                    f"bridge network ({self.runtime.kind} runs with --bridge=none)"
                )
        return None

    def check(self, task_id: str, config: HarborTaskConfig) -> None:
        refusal = self.refusal(task_id, config)
        if refusal is not None:
            raise InfrastructureError(refusal)

    def start_network(self, config: HarborTaskConfig) -> str:
        """The `--network` a task's container starts on."""
        if self.host_network:
            return HOST
        return BRIDGE if config.needs_network else NONE

    async def enter(self, container_id: str, config: HarborTaskConfig, phase: Phase) -> None:
        """Connect the container to the bridge, or cut it off, as `phase` says; nothing when the
        phases agree (it started as they say) or on the host's network."""
        if self.host_network or not config.needs_network:
            return
        if all(config.network(other).needs_network for other in Phase):
            return
        wanted = config.network(phase).needs_network
        verb = "connect" if wanted else "disconnect"
        done = await self.runtime.acall("network", verb, BRIDGE, container_id)
        said = " ".join((done.stderr or "").split())
        if done.returncode != 0 and "already exists" not in said and "is not connected" not in said:
            raise InfrastructureError(
                f"cannot {verb} container {container_id[:12]} {'to' if wanted else 'from'} the {BRIDGE} "
                f"network for the {phase} phase: {said[:300]}"
            )
