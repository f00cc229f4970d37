"""OpenTelemetry traces of a command: the spans the loop, the runner, the roles and the model
call open (`spans`, the seam they call, a no-op unless a command's trace is on), and the
OpenTelemetry SDK behind them with its OTLP exporter (`otlp`, the only module that imports
OpenTelemetry, and only once a command turns tracing on). It may import `core`. Its section of
wikiskill.yaml is `settings`, in core's layer."""
