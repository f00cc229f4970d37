"""Whether an observing server (a tracker, a trace collector) accepts connections, asked of real
local sockets: one that listens is reachable, a closed port says why not, a listener whose backlog
is full gives up at the bound it was given, a proxy in the environment is what gets asked, and an
address that is not http(s) is left to its own client."""

import socket
from collections.abc import Iterator

import pytest

from wikiskill.core.endpoints import unreachable, without_login

PROXY_VARIABLES = ("http_proxy", "https_proxy", "no_proxy", "all_proxy")


@pytest.fixture(autouse=True)
def no_proxy_set(monkeypatch):
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


@pytest.fixture
def listening() -> Iterator[int]:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield listener.getsockname()[1]


@pytest.fixture
def closed() -> int:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        return int(listener.getsockname()[1])


def test_a_server_that_listens_is_reachable(listening):
    assert unreachable(f"http://127.0.0.1:{listening}/api") is None
    assert unreachable(f"https://user:secret@127.0.0.1:{listening}") is None


def test_a_closed_port_is_unreachable_with_the_systems_reason(closed):
    assert unreachable(f"http://127.0.0.1:{closed}") == "Connection refused"
    assert unreachable(f"https://localhost:{closed}/v1/traces") == "Connection refused"


def test_a_listener_that_never_accepts_gives_up_at_the_bound_it_was_given():
    with socket.create_server(("127.0.0.1", 0), backlog=0) as listener:
        port = listener.getsockname()[1]
        queued: list[socket.socket] = []
        try:
            while True:  # connects the kernel completes unaccepted, until the backlog is full
                try:
                    queued.append(socket.create_connection(("127.0.0.1", port), timeout=0.3))
                except TimeoutError:
                    break
            assert unreachable(f"http://127.0.0.1:{port}", timeout=0.25) == "no answer within 0.25 s"
        finally:
            for connection in queued:
                connection.close()


def test_an_address_that_is_not_http_is_left_to_its_client(closed):
    assert unreachable(f"file:///tmp/mlruns:{closed}") is None
    assert unreachable(f"databricks://127.0.0.1:{closed}") is None
    assert unreachable("http:///no-host") is None


def test_a_port_that_is_no_number_is_named_without_the_login():
    assert unreachable("http://user:secret@tracker.example:99999/") == "tracker.example:99999 is not a host and port"
    assert unreachable("https://tracker.example:port") == "tracker.example:port is not a host and port"


@pytest.mark.parametrize("written", ["127.0.0.1:{port}", "http://127.0.0.1:{port}"])
def test_with_a_proxy_set_the_proxy_is_asked_not_the_server(monkeypatch, listening, closed, written):
    monkeypatch.setenv("http_proxy", written.format(port=listening))
    assert unreachable(f"http://127.0.0.1:{closed}") is None
    monkeypatch.setenv("https_proxy", written.format(port=closed))
    assert unreachable(f"https://127.0.0.1:{listening}") == "Connection refused"


def test_a_host_the_proxy_is_bypassed_for_is_asked_itself(monkeypatch, listening, closed):
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{listening}")
    monkeypatch.setenv("no_proxy", "localhost")
    assert unreachable(f"http://localhost:{closed}") == "Connection refused"


def test_a_proxy_that_is_no_host_and_port_is_named(monkeypatch):
    monkeypatch.setenv("http_proxy", "http://proxy.example:bad")
    assert unreachable("http://127.0.0.1:1") == "proxy.example:bad is not a host and port"


def test_the_login_is_taken_out_of_an_address_and_the_rest_kept():
    assert without_login("http://user:secret@tracker.example:5000/path?q=1") == "http://tracker.example:5000/path?q=1"
    assert without_login("https://tracker.example/x") == "https://tracker.example/x"
    assert without_login("file:///tmp/user@mlruns") == "file:///tmp/user@mlruns"
    assert without_login("file:/tmp/mlruns") == "file:/tmp/mlruns"  # as written, no `//` added
