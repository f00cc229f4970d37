"""A Harbor task's `[environment] storage_mb`: enforced by the engine where it can be
(`--storage-opt size=`, which Docker's overlay2 honours only on xfs mounted with project quotas,
and Podman's overlay likewise), else checked. The engine's first refusal of the option is
remembered, with one warning, and from then on each task's container starts without it and its
writable layer (what the agent and the verifier wrote, the copied-in tests and solution
included) is measured after the agent and again after the verifier: a task over its limit fails,
as it would have when its writes ran out of room. A check cannot stop a write while it happens,
so on such an engine the limit guards the score, not this machine's disk."""

from __future__ import annotations

import logging
import subprocess
import threading

from ..core.errors import InfrastructureError
from .runtime import Runtime

REFUSALS = ("--storage-opt is supported only", "storage-opt", "storage option")
"""What Docker's and Podman's refusal of `--storage-opt size=` says."""
MB = 1024 * 1024

log = logging.getLogger(__name__)


class StorageOptRefused(InfrastructureError):
    """The engine cannot limit a container's disk (`--storage-opt size=`)."""


def storage_argv(storage_mb: int | None) -> list[str]:
    return ["--storage-opt", f"size={storage_mb}m"] if storage_mb else []


def refused(started: subprocess.CompletedProcess[str]) -> bool:
    """Whether a failed `run` failed because the engine cannot take `--storage-opt size=`."""
    said = (started.stderr or "").lower()
    return started.returncode != 0 and any(refusal in said for refusal in REFUSALS)


class StorageLimit:
    """Whether this engine enforces `storage_mb`, learnt from its first answer, shared by every
    task's container of one command."""

    def __init__(self, runtime: Runtime):
        self.runtime = runtime
        self.enforced: bool | None = None
        """None until a container with a storage limit was started."""
        self._lock = threading.Lock()

    def wanted(self, storage_mb: int | None) -> int | None:
        """The limit to pass to the engine: none once it has refused one."""
        return None if self.enforced is False else storage_mb

    def learn(self, enforced: bool) -> None:
        with self._lock:
            if self.enforced is not None:
                return
            self.enforced = enforced
        if not enforced:
            log.warning(
                "wikiskill: %s cannot limit a container's disk (--storage-opt size= needs overlay2 on xfs "
                "with pquota): a task's storage_mb is checked after its agent and its verifier, not "
                "enforced while they run",
                self.runtime.kind,
            )

    async def over(self, container_id: str, storage_mb: int | None) -> str | None:
        """Why the container is over its task's limit, or None (also when the engine enforces it)."""
        if not storage_mb or self.enforced is not False:
            return None
        done = await self.runtime.acall("inspect", "--size", "--format", "{{.SizeRw}}", container_id)
        try:
            used = int(done.stdout.strip())
        except ValueError:
            raise InfrastructureError(
                f"cannot measure the disk of container {container_id[:12]}: {done.stderr.strip()[:200]}"
            ) from None
        if used <= storage_mb * MB:
            return None
        return f"the task's container used {used / MB:.0f} MB of disk, over its storage_mb of {storage_mb} MB"
