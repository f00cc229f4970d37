"""A local OTLP/HTTP trace receiver for tests and the telemetry benchmark: it answers
`POST /v1/traces` as a collector does and keeps every request body (`keep=True`), or drops
them (a sink that costs the exporter nothing but the request). Decoding uses the
`opentelemetry-proto` package the `otel` extra brings."""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TRACES_PATH = "/v1/traces"


@dataclass(frozen=True)
class ReceivedSpan:
    """One exported span, decoded: ids as hex, attributes as Python values."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, Any]
    status_code: int


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: OtlpReceiver
    server_address: tuple[str, int]  # bound to an IPv4 host given as text, never bytes


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        if self.path != TRACES_PATH:
            self.send_response(404)
            self.end_headers()
            return
        self.server.owner.received(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class OtlpReceiver:
    """`with OtlpReceiver() as receiver:` point `OTEL_EXPORTER_OTLP_ENDPOINT` at `receiver.url`."""

    def __init__(self, keep: bool = True, host: str = "127.0.0.1", port: int = 0):
        self.keep = keep
        self.requests = 0
        self._bodies: list[bytes] = []
        self._lock = threading.Lock()
        self._httpd = _Server((host, port), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def received(self, body: bytes) -> None:
        with self._lock:
            self.requests += 1
            if self.keep:
                self._bodies.append(body)

    @property
    def raw(self) -> bytes:
        """Every request body as it arrived, for searching the export for what must not be in it."""
        with self._lock:
            return b"".join(self._bodies)

    def spans(self) -> list[ReceivedSpan]:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        with self._lock:
            bodies = list(self._bodies)
        spans = []
        for body in bodies:
            request = ExportTraceServiceRequest.FromString(body)
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    spans += [_decoded(span) for span in scope.spans]
        return spans


def _decoded(span: Any) -> ReceivedSpan:
    return ReceivedSpan(
        name=span.name,
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        parent_id=span.parent_span_id.hex(),
        attributes={attribute.key: _value(attribute.value) for attribute in span.attributes},
        status_code=span.status.code,
    )


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


def main() -> None:
    import argparse
    import time

    parser = argparse.ArgumentParser(description="A local OTLP/HTTP trace receiver that drops what it receives.")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    with OtlpReceiver(keep=False, port=args.port) as receiver:
        print(f"OTLP receiver at {receiver.url} (dropping spans)", flush=True)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
