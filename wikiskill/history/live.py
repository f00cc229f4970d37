"""`wikiskill report --serve`: the HTML report served on loopback, refreshed in the browser as a run
goes.

The page polls `/live.json`: the workspace's version (a digest of its branches and tags, which
every committed step moves) and the running evolve's progress file (`loop.progress_file`). It
shows the progress at once and, when the version moved, fetches the page again and swaps the
report in place, so new rounds appear without a reload. The server only reads: it never writes
the workspace and never takes its lock, so it runs beside the evolve it watches.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ..core.errors import ConfigError
from ..loop.progress_file import RunProgress, read_progress
from ..store.workspace import Workspace
from .htmlreport import render_report, report_data

HOST = "127.0.0.1"
DEFAULT_PORT = 8760


def check_port(port: int) -> None:
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port {port} is not a port: give 1 to 65535, or 0 for any free one")


class LiveReport:
    """What the server answers, read from the workspace under one lock (its git readers are not
    shared between threads)."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self._lock = threading.Lock()
        self._page: tuple[str, bytes] = ("", b"")  # (version, page)
        self._plotly: bytes | None = None

    def version(self) -> str:
        refs = {**self.ws.refs("refs/heads/"), **{f"tag:{k}": v for k, v in self.ws.refs("refs/tags/").items()}}
        return hashlib.sha256(json.dumps(sorted(refs.items())).encode()).hexdigest()[:16]

    def page(self) -> bytes:
        with self._lock:
            version = self.version()
            if self._page[0] != version:
                html = render_report(report_data(self.ws), self.ws.root.name, live=version)
                self._page = (version, html.encode("utf-8"))
            return self._page[1]

    def state(self) -> dict[str, object]:
        with self._lock:
            version = self.version()
        progress = read_progress(self.ws.state_dir)
        return {
            "version": version,
            "running": progress is not None and is_running(progress),
            "progress": None if progress is None else progress.model_dump(),
        }

    def plotly(self) -> bytes:
        if self._plotly is None:
            from plotly.offline import get_plotlyjs

            self._plotly = get_plotlyjs().encode("utf-8")
        return self._plotly


def is_running(progress: RunProgress) -> bool:
    """The run that wrote `progress` has not finished and its process is still there."""
    if progress.finished:
        return False
    try:
        os.kill(progress.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # there, under another user
    return True


class _Handler(BaseHTTPRequestHandler):
    server: LiveReportServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        report = self.server.report
        path = self.path.split("?", 1)[0]
        try:
            if path == "/":
                self._send(report.page(), "text/html; charset=utf-8")
            elif path == "/live.json":
                self._send(json.dumps(report.state()).encode(), "application/json")
            elif path == "/plotly.min.js":
                self._send(report.plotly(), "text/javascript; charset=utf-8", cache=True)
            else:
                self.send_error(HTTPStatus.NOT_FOUND)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the browser went away

    def _send(self, body: bytes, content_type: str, cache: bool = False) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=86400" if cache else "no-store")
        self.end_headers()
        self.wfile.write(body)


class LiveReportServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, ws: Workspace, port: int):
        check_port(port)
        self.report = LiveReport(ws)
        try:
            super().__init__((HOST, port), _Handler)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ConfigError(
                    f"port {port} on {HOST} is in use: pick another with --port (0: any free one)"
                ) from None
            raise ConfigError(f"cannot serve on {HOST}:{port}: {exc.strerror}") from None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server_address[1]}/"
