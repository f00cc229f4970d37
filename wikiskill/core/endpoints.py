"""Whether a server that only observes a run (an experiment tracker, a trace collector) accepts
connections: asked once, with a short bound, so that its outage costs a command seconds, not the
minutes its client's retries would."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

CONNECT_TIMEOUT_S = 3.0
"""How long such a server gets to accept a connection before the command goes on without it."""
DEFAULT_PORTS = {"http": 80, "https": 443}


def unreachable(url: str, timeout: float = CONNECT_TIMEOUT_S) -> str | None:
    """Why the server of the http(s) `url` did not accept a TCP connection within `timeout`
    seconds; None when it did, or when `url` is not an http(s) address (a file store, a plugin's
    scheme), which its client reaches by its own means."""
    parts = urlsplit(url)
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    proxy = getproxies().get(parts.scheme)
    if proxy and not proxy_bypass(parts.hostname):  # the client connects to its proxy, not the server
        parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    try:
        port = parts.port or DEFAULT_PORTS.get(parts.scheme, 80)
    except ValueError:
        return f"{parts.netloc.rpartition('@')[2]} is not a host and port"
    if not parts.hostname:
        return None
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            return None
    except OSError as exc:
        if isinstance(exc, TimeoutError):
            return f"no answer within {timeout:g} s"
        return exc.strerror or type(exc).__name__


def without_login(url: str) -> str:
    """`url` without a `user:password@` part."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl() if parts.netloc else url
