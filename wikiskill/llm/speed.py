"""The measured speed of a server, so a request is sized to finish within the timeout, and the
timeout to what the request takes there. Every role that calls the same model on the same server
in one command reads and feeds one measurement (`SpeedBook`): the maintainer's one call of a round
is sized from what the task agent's calls measured before it. The book is kept in the workspace's
state folder (`SPEED_FILE`), so a resumed command, `estimate` and `doctor` start from what the last
one measured."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from pydantic import BaseModel, ValidationError

SPEED_SAMPLES = 16
SPEED_FILE = "server-speed.json"

Sample = tuple[int, int, float]
"""One call: (prompt tokens, completion tokens, seconds)."""


class _Measured(BaseModel):
    model: str
    api_base: str | None = None
    calls: list[Sample]


class _SpeedFile(BaseModel):
    servers: list[_Measured]


class ServerSpeed:
    """Seconds per prompt token and per completion token of one server, fitted (by
    non-negative least squares) to its recent calls. A slow local server is normal: knowing its
    speed, a request is cut before it is sent rather than timed out and sent again unchanged."""

    def __init__(self, calls: list[Sample] | None = None) -> None:
        self._calls: list[Sample] = list(calls or [])[-SPEED_SAMPLES:]
        self._first = True
        self._lock = threading.Lock()

    def record(self, prompt_tokens: int, completion_tokens: int, seconds: float) -> None:
        """Measure a finished call; a process's first is left out (it pays the client's own set-up)."""
        with self._lock:
            if self._first:
                self._first = False
                return
        self.add(prompt_tokens, completion_tokens, seconds)

    def add(self, prompt_tokens: int, completion_tokens: int, seconds: float) -> None:
        """Measure a call that paid no set-up of its own (`doctor`'s probes after its first)."""
        with self._lock:
            if prompt_tokens > 0 and seconds > 0:
                self._calls = [*self._calls[-(SPEED_SAMPLES - 1) :], (prompt_tokens, completion_tokens, seconds)]

    def samples(self) -> list[Sample]:
        with self._lock:
            return list(self._calls)

    def prompt_budget(self, seconds: float, completion_tokens: int) -> int | None:
        """The most prompt tokens a request can hold to finish within `seconds` while generating
        `completion_tokens`; None until two calls of different sizes were measured."""
        fitted = self._fitted()
        if fitted is None or fitted[0] <= 0:
            return None
        per_prompt, per_completion = fitted
        return max(0, int((seconds - per_completion * completion_tokens) / per_prompt))

    def seconds(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """How long a request of `prompt_tokens` that generates `completion_tokens` takes at the
        measured speed; None until two calls of different sizes were measured."""
        fitted = self._fitted()
        if fitted is None:
            return None
        per_prompt, per_completion = fitted
        return per_prompt * prompt_tokens + per_completion * completion_tokens

    def _fitted(self) -> tuple[float, float] | None:
        """(seconds per prompt token, seconds per completion token)."""
        with self._lock:
            calls = list(self._calls)
        if len({prompt for prompt, _, _ in calls}) < 2:
            return None
        import numpy as np
        from scipy.optimize import nnls

        (per_prompt, per_completion), _ = nnls(
            np.array([[p, c] for p, c, _ in calls], dtype=float), np.array([s for _, _, s in calls], dtype=float)
        )
        return float(per_prompt), float(per_completion)


class SpeedBook:
    """The measured speed of each (model, server) one command calls, shared by all its roles;
    read from `path` when given (a file that is missing or unreadable starts an empty book)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._speeds: dict[tuple[str, str | None], ServerSpeed] = {}
        self._lock = threading.Lock()
        self._read = ""
        if path is not None:
            try:
                kept = _SpeedFile.model_validate_json(path.read_bytes())
            except (OSError, ValidationError):
                return
            self._speeds = {(server.model, server.api_base): ServerSpeed(server.calls) for server in kept.servers}
            self._read = self._text()

    def of(self, model: str, api_base: str | None) -> ServerSpeed:
        with self._lock:
            return self._speeds.setdefault((model, api_base), ServerSpeed())

    def save(self) -> None:
        """Keep what was measured at `path` (by an atomic rename), when there is one and anything
        new was measured."""
        text = self._text()
        if self.path is None or text in ("", self._read):
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, self.path)
        self._read = text

    def _text(self) -> str:
        with self._lock:
            servers = [
                _Measured(model=model, api_base=api_base, calls=speed.samples())
                for (model, api_base), speed in self._speeds.items()
                if speed.samples()
            ]
        return _SpeedFile(servers=servers).model_dump_json() if servers else ""
