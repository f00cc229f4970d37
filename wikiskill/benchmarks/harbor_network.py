"""A Harbor task's network, as Harbor's task schema (1.4) has it: `[environment] network_mode`
(`public`, `no-network`, `allowlist` with `allowed_hosts`) is the baseline, and `[agent]` and
`[verifier]` may each override it for their phase. The older `[environment] allow_internet` is read
as `public` or `no-network` when `network_mode` is unset; with neither the task is `public`.
`allowed_hosts` without a mode means `allowlist`, and an allowlist of no host denies all egress,
so it is `no-network`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class NetworkMode(StrEnum):
    PUBLIC = "public"
    NO_NETWORK = "no-network"
    ALLOWLIST = "allowlist"


class Phase(StrEnum):
    """When a task's commands run: the agent's (and the oracle's) work, then the verifier's."""

    AGENT = "agent"
    VERIFIER = "verifier"


@dataclass(frozen=True)
class NetworkPolicy:
    mode: NetworkMode
    allowed_hosts: tuple[str, ...] = ()

    @property
    def needs_network(self) -> bool:
        """Whether the phase reaches anything beyond the task's own containers."""
        return self.mode != NetworkMode.NO_NETWORK

    def __str__(self) -> str:
        if self.mode == NetworkMode.ALLOWLIST:
            return f"allowlist ({', '.join(self.allowed_hosts)})"
        return self.mode.value


NO_NETWORK = NetworkPolicy(NetworkMode.NO_NETWORK)
PUBLIC = NetworkPolicy(NetworkMode.PUBLIC)


def normalize_hosts(hosts: list[str], where: str) -> tuple[str, ...]:
    """Hostnames or IPv4 addresses, lower-cased, deduplicated; a URL, port or path is refused."""
    normalized: list[str] = []
    for host in hosts:
        value = str(host).strip().lower().rstrip(".")
        if not value:
            continue
        if "://" in value or "/" in value or ":" in value:
            raise ValueError(f"{where}.allowed_hosts: {host!r} is not a hostname or an IPv4 address")
        if value not in normalized:
            normalized.append(value)
    return tuple(normalized)


def explicit_policy(mode: NetworkMode | None, hosts: list[str], where: str) -> NetworkPolicy | None:
    """The policy a table states, or None when it states none."""
    allowed = normalize_hosts(hosts, where)
    if mode is None and not allowed:
        return None
    mode = mode or NetworkMode.ALLOWLIST
    if allowed and mode != NetworkMode.ALLOWLIST:
        raise ValueError(f"{where}.allowed_hosts is only valid with {where}.network_mode = 'allowlist'")
    if mode == NetworkMode.ALLOWLIST and not allowed:
        return NO_NETWORK
    return NetworkPolicy(mode, allowed)


def baseline(mode: NetworkMode | None, hosts: list[str], allow_internet: bool | None) -> NetworkPolicy:
    """`[environment]`'s policy: its `network_mode`, else `allow_internet`, else public."""
    stated = explicit_policy(mode, hosts, "environment")
    if stated is not None:
        return stated
    return NO_NETWORK if allow_internet is False else PUBLIC
