"""The OpenTelemetry SDK of a command whose trace is on: the only module that imports
OpenTelemetry, and only from `open_tracing`, so a command without telemetry never loads it."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..core.endpoints import unreachable, without_login
from ..core.errors import ConfigError
from .settings import TelemetrySettings

EXTRA = "pip install 'wikiskill[otel]'"
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
TRACES_PATH = "/v1/traces"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Destination:
    """Where a command's spans go: `endpoint` (None: the one OpenTelemetry's variables name,
    read by its exporter) and what turned tracing on, for the error when the extra is missing."""

    endpoint: str | None
    source: str

    @property
    def url(self) -> str:
        """Where the exporter sends spans, whether named here or by OpenTelemetry's variables."""
        if self.endpoint is not None:
            return self.endpoint
        traces = os.environ.get(ENDPOINT_VARIABLES[0], "").strip()
        return traces or os.environ.get(ENDPOINT_VARIABLES[1], "").strip().rstrip("/") + TRACES_PATH


def destination(settings: TelemetrySettings) -> Destination | None:
    """Where this command's spans go; None when nothing turns tracing on (or
    `OTEL_SDK_DISABLED=true` turns it off)."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if settings.otlp:
        return Destination(settings.otlp.rstrip("/") + TRACES_PATH, "telemetry.otlp in wikiskill.yaml")
    named = next((name for name in ENDPOINT_VARIABLES if os.environ.get(name, "").strip()), None)
    return Destination(None, named) if named else None


@dataclass
class Tracing:
    """One command's tracer and the provider that batches and exports its spans."""

    tracer: Any
    provider: Any
    trace_api: Any

    def current(self) -> Any:
        return self.trace_api.get_current_span()

    def error_status(self, description: str) -> Any:
        return self.trace_api.Status(self.trace_api.StatusCode.ERROR, description)

    def close(self) -> None:
        """Export what is still batched and stop the exporter."""
        self.provider.shutdown()


def open_tracing(where: Destination) -> Tracing | None:
    """The command's tracing; None, after one warning, when the endpoint does not accept a
    connection within a short bound (its exporter would retry every batch, and the command's end
    would wait on them): traces are off for this command, and the run goes on."""
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise ConfigError(f"{where.source} turns on OpenTelemetry traces, which need: {EXTRA}") from None
    problem = unreachable(where.url)
    if problem is not None:
        log.warning(
            "warning: telemetry: the OTLP endpoint %s could not be reached (%s); traces are off for this command",
            without_login(where.url),
            problem,
        )
        return None
    attributes = {"service.version": __version__}
    if not os.environ.get("OTEL_SERVICE_NAME"):
        attributes["service.name"] = "wikiskill"
    provider = TracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=where.endpoint)))
    return Tracing(provider.get_tracer("wikiskill", __version__), provider, trace)
