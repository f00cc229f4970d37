"""The containers a Harbor suite's tasks run in (`environment` in wikiskill.yaml). In core's layer:
it imports only `core`."""

from __future__ import annotations

from enum import StrEnum

from ..core.section import Section


class ContainerRuntime(StrEnum):
    """The container engine a Harbor suite's tasks run in, driven through its command line."""

    DOCKER = "docker"
    PODMAN = "podman"


class EnvironmentSettings(Section):
    runtime: ContainerRuntime = ContainerRuntime.DOCKER
    """`docker` or `podman`: the command that builds a Harbor task's image and runs its container
    (Podman takes Docker's arguments)."""
    host_network: bool = False
    """Run every task's container on the host's network (`--network host`) instead of none (or
    the default network where a task says `allow_internet`). A model server listening on the
    host's loopback (`127.0.0.1`) is reachable from inside a container only this way; the
    built-in agent calls the model from wikiskill's own process and needs no network inside, a
    coding-agent CLI calls it from inside (without this, a loopback endpoint is refused)."""
    cache_dir: str | None = None
    """Where image build logs are kept; unset: `.wikiskill/images/` in the workspace."""
