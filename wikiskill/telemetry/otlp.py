"""The OpenTelemetry SDK of a command whose trace is on: the only module that imports
OpenTelemetry, and only from `open_tracing`, so a command without telemetry never loads it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..core.config import TelemetrySettings
from ..core.errors import ConfigError

EXTRA = "pip install 'wikiskill[otel]'"
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
TRACES_PATH = "/v1/traces"


@dataclass(frozen=True)
class Destination:
    """Where a command's spans go: `endpoint` (None: the one OpenTelemetry's variables name,
    read by its exporter) and what turned tracing on, for the error when the extra is missing."""

    endpoint: str | None
    source: str


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


def open_tracing(where: Destination) -> Tracing:
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise ConfigError(f"{where.source} turns on OpenTelemetry traces, which need: {EXTRA}") from None
    attributes = {"service.version": __version__}
    if not os.environ.get("OTEL_SERVICE_NAME"):
        attributes["service.name"] = "wikiskill"
    provider = TracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=where.endpoint)))
    return Tracing(provider.get_tracer("wikiskill", __version__), provider, trace)
