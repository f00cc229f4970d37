"""The seam every traced part calls: one trace per command (`command`), inside it a span per
round, step, batch of tasks, task, model call and tool call. Off (no command traced), each
helper yields `NO_SPAN` and costs a function call; nothing of OpenTelemetry is imported.

What enters a span is decided here: ids, names, counts, scores and costs, every string scrubbed
of secrets (`core.redact`). No prompt, reply, question or tool argument is ever recorded, so a
validation or test task's content stays out of the export the way it stays out of roles' reach.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from enum import Enum
from typing import Any

from ..core.redact import Scrubber
from .otlp import Tracing, destination, open_tracing
from .settings import TelemetrySettings

TASK_SPANS = {"train": "rollout", "val": "validation", "test": "evaluation"}
"""The name of a task's span by its split."""

_active: Tracing | None = None
_scrub: Scrubber | None = None
_split: ContextVar[str | None] = ContextVar("wikiskill_split", default=None)


class Span:
    """A span the caller may add attributes to once it knows them (a task's score, a call's usage)."""

    def __init__(self, raw: Any = None):
        self._raw = raw

    def set(self, attributes: Mapping[str, object]) -> None:
        if self._raw is not None:
            self._raw.set_attributes(_clean(attributes))

    def usage(self, usage: Any, attempts: int) -> None:
        """A model call's `store.traces.Usage` in the GenAI semantic conventions (cost, which
        they lack, and the attempts it took are wikiskill's own)."""
        self.set(
            {
                "gen_ai.usage.input_tokens": usage.prompt_tokens,
                "gen_ai.usage.output_tokens": usage.completion_tokens,
                "gen_ai.usage.cache_read.input_tokens": usage.cached_tokens,
                "wikiskill.cost_usd": usage.cost_usd,
                "wikiskill.attempts": attempts,
            }
        )


NO_SPAN = Span()


def tracing() -> bool:
    return _active is not None


@contextmanager
def command(name: str, settings: TelemetrySettings, **attributes: object) -> Iterator[None]:
    """The command's trace, when `telemetry.otlp` or OpenTelemetry's variables turn it on: every
    span opened inside is part of it, and all are exported before this returns."""
    global _active, _scrub
    where = destination(settings)
    if where is None or _active is not None:
        yield
        return
    opened = open_tracing(where)
    if opened is None:
        yield
        return
    _active, _scrub = opened, Scrubber()
    try:
        with span(f"wikiskill {name}", _named({"command": name, **attributes})):
            yield
    finally:
        active, _active = _active, None
        active.close()


@contextmanager
def span(name: str, attributes: Mapping[str, object] | None = None) -> Iterator[Span]:
    """A child of the current span. An exception marks it failed with the exception's type only:
    its message may quote a prompt or a task."""
    if _active is None:
        yield NO_SPAN
        return
    with _active.tracer.start_as_current_span(
        name, attributes=_clean(attributes or {}), record_exception=False, set_status_on_exception=False
    ) as raw:
        try:
            yield Span(raw)
        except BaseException as exc:
            raw.set_status(_active.error_status(type(exc).__name__))
            raise


def round_span(number: int) -> Any:
    return span(f"round {number}", {"wikiskill.round": number})


def step_span(step: object, round_number: int) -> Any:
    return span(f"step {_text(step)}", {"wikiskill.round": round_number, "wikiskill.step": step})


@contextmanager
def tasks_span(split: str, ref: str, count: int) -> Iterator[Span]:
    """The tasks of one split run with the skills at `ref`; the task spans inside name the split."""
    token = _split.set(split)
    try:
        with span(f"tasks {split}", {"wikiskill.split": split, "wikiskill.ref": ref, "wikiskill.tasks": count}) as s:
            yield s
    finally:
        _split.reset(token)


def task_span(task_id: str) -> Any:
    split = _split.get()
    return span(TASK_SPANS.get(split or "", "task"), {"wikiskill.task.id": task_id, "wikiskill.split": split})


def model_call_span(role: object, model: str, request: Mapping[str, Any]) -> Any:
    """A model call in the GenAI semantic conventions: the request's model and sampling, never its messages."""
    provider = model.split("/", 1)[0] if "/" in model else model
    return span(
        f"chat {model}",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": model,
            "gen_ai.request.temperature": request.get("temperature"),
            "gen_ai.request.max_tokens": request.get("max_tokens"),
            "wikiskill.role": role,
        },
    )


TOOL_NAME_CHARS = 100
"""A tool's name is the model's text: a longer one is cut in a span's name and attribute."""


def tool_call_span(name: str) -> Any:
    name = name[:TOOL_NAME_CHARS]
    return span(f"execute_tool {name}", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name})


def annotate(**attributes: object) -> None:
    """wikiskill attributes (`skill`, `decision`, `fingerprint`, `score`, ...) on the current span."""
    if _active is not None:
        Span(_active.current()).set(_named(attributes))


def _named(attributes: Mapping[str, object]) -> dict[str, object]:
    return {f"wikiskill.{key}": value for key, value in attributes.items()}


def _clean(attributes: Mapping[str, object]) -> dict[str, Any]:
    """Attributes as OpenTelemetry takes them: unset ones left out, enums as their values, every
    string scrubbed of secrets."""
    clean: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, (bool, int, float)):
            clean[key] = value
        else:
            clean[key] = _text(value)
    return clean


def _text(value: object) -> str:
    text = value.value if isinstance(value, Enum) else value
    text = text if isinstance(text, str) else str(text)
    return _scrub(text) if _scrub is not None else text
