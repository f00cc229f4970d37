"""The measured speed of a server, so a request is sized to finish within the timeout, and the
timeout to what the request takes there. Every role that calls the same model on the same server
in one command reads and feeds one measurement (`SpeedBook`): the maintainer's one call of a round
is sized from what the task agent's calls measured before it."""

from __future__ import annotations

import threading

SPEED_SAMPLES = 16


class ServerSpeed:
    """Seconds per prompt token and per completion token of one server, fitted (by
    non-negative least squares) to its recent calls. A slow local server is normal: knowing its
    speed, a request is cut before it is sent rather than timed out and sent again unchanged."""

    def __init__(self) -> None:
        self._calls: list[tuple[int, int, float]] = []  # (prompt tokens, completion tokens, seconds)
        self._first = True
        self._lock = threading.Lock()

    def record(self, prompt_tokens: int, completion_tokens: int, seconds: float) -> None:
        """Measure a finished call; the first is left out (it pays the client's own set-up)."""
        with self._lock:
            if self._first:
                self._first = False
            elif prompt_tokens > 0 and seconds > 0:
                self._calls = [*self._calls[-(SPEED_SAMPLES - 1) :], (prompt_tokens, completion_tokens, seconds)]

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
    """The measured speed of each (model, server) one command calls, shared by all its roles."""

    def __init__(self) -> None:
        self._speeds: dict[tuple[str, str | None], ServerSpeed] = {}
        self._lock = threading.Lock()

    def of(self, model: str, api_base: str | None) -> ServerSpeed:
        with self._lock:
            return self._speeds.setdefault((model, api_base), ServerSpeed())
