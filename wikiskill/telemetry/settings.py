"""OpenTelemetry traces of a command (`telemetry` in wikiskill.yaml). In core's layer: it imports
only `core`."""

from __future__ import annotations

from ..core.section import Section


class TelemetrySettings(Section):
    otlp: str | None = None
    """OpenTelemetry traces of every `evolve`, `evaluate`, `compare` and `audit` to this OTLP/HTTP
    endpoint (`http://localhost:4318`; spans are posted to its `/v1/traces`): one trace per
    command, with a span per round, step, task, model call and tool call. Unset: traces go out
    only when OpenTelemetry's own variables name an endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`,
    `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); with neither, nothing of OpenTelemetry is imported.
    Needs `pip install 'wikiskill[otel]'`."""
