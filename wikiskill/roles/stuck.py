"""Notices an agent that repeats itself (OpenHands calls it a stuck detector): the same action with
the same result `WARN_AT` times in a row earns one message naming the repetition; `STOP_AT` times
ends the episode as `failure: stuck`, so the steps left spend no tokens on it. A step limit alone
lets a small model run `cat solution.py` until it runs out."""

from __future__ import annotations

from enum import Enum

WARN_AT = 3
STOP_AT = 4


class Verdict(Enum):
    GO_ON = "go on"
    WARN = "warn"
    STOP = "stop"


class StuckDetector:
    """Counts how often in a row one (action, result) pair came back."""

    def __init__(self, warn_at: int = WARN_AT, stop_at: int = STOP_AT):
        self.warn_at = warn_at
        self.stop_at = stop_at
        self.last: tuple[str, str] | None = None
        self.repeats = 0

    def see(self, action: str, result: str) -> Verdict:
        """The verdict after one more step that did `action` and got `result`."""
        pair = (action, result)
        self.repeats = self.repeats + 1 if pair == self.last else 1
        self.last = pair
        if self.repeats >= self.stop_at:
            return Verdict.STOP
        return Verdict.WARN if self.repeats == self.warn_at else Verdict.GO_ON
