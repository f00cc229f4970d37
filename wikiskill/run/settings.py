"""How a task whose machinery fails is retried (`infra` in wikiskill.yaml). In core's layer: it
imports only `core`."""

from __future__ import annotations

from pydantic import Field

from ..core.section import Section


class InfraSettings(Section):
    retries: int = Field(1, ge=0)
    """Times a task that fails on infrastructure (a scorer that crashed or wrote no reward, an
    image that would not build, a container that would not start) is tried again before it is
    recorded as `infra`, unscored; 0 = never. A scored task is never run again. Each retry runs on
    the worker that tried it first, except under `executor: ray` with workers on several nodes,
    where it runs on a node that has not tried the task yet (one that has only when all have)."""
    backoff: float = Field(1.0, ge=0)
    """Seconds waited before the first retry, doubled before each one after it."""
    backoff_max: float = Field(30.0, ge=0)
    """The longest wait between two tries, in seconds."""

    def delay(self, retry: int) -> float:
        """The wait before retry number `retry` (1, 2, ...)."""
        return min(self.backoff * 2.0 ** (retry - 1), self.backoff_max)
