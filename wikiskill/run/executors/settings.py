"""The Ray cluster of `executor: ray` (`ray` in wikiskill.yaml). In core's layer: it imports only `core`."""

from __future__ import annotations

from pydantic import Field

from ...core.section import Section


class RaySettings(Section):
    address: str | None = None
    """Ray cluster to run tasks on (`ray://HEAD:10001` or `HEAD:6379`); empty = the `RAY_ADDRESS`
    environment variable, else a local Ray started for the command and stopped after it."""
    num_cpus: int | None = Field(None, ge=1)
    """CPUs of a local Ray started for the command; empty = all of this machine's."""
    pip: list[str] = []
    """Packages Ray installs for the workers of a cluster (its runtime environment's `pip`), for
    nodes whose image lacks wikiskill's dependencies; empty = none. The wikiskill package and
    the workspace's files (without `.git` and `.wikiskill`) are always shipped to a cluster."""
    resources: dict[str, float] = {}
    """Ray resources each worker asks for (e.g. `{docker: 1}`), so that workers run only on the
    nodes that offer them (`ray start --resources '{"docker": 8}'` on the nodes with a container
    engine); empty = none beyond Ray's defaults. When no live node offers them all, the command
    fails at once, naming what the nodes offer, instead of waiting for such a node."""
