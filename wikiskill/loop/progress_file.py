"""The progress a running `evolve` keeps in `.wikiskill/progress.json` for other processes to watch
(`wikiskill report --serve`): the line it said last, the task bar of the step running now and the
spend of this run so far. The loop's reporter writes it, each time by an atomic rename, so a
reader sees a whole file or the one before; readers only read it."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ValidationError

from ..contracts.running import Reporter
from ..store.traces import Trajectory, Usage

if TYPE_CHECKING:
    from .harness import Harness

PROGRESS_FILE = "progress.json"


class TaskBar(BaseModel):
    """The tasks of the step running now, as its progress bar shows them."""

    description: str
    done: int = 0
    total: int
    score: float | None = None
    """The mean score of the tasks done so far; None before the first."""
    cost_usd: float = 0.0


class RoleTurns(BaseModel):
    """The learning role at work now (the maintainer, the proposer), as its turns finish."""

    description: str
    turn: int
    """Model turns finished so far."""
    tokens: int
    """The role's tokens so far."""


class RunProgress(BaseModel):
    pid: int
    started: float
    """Seconds since the epoch, as `updated`."""
    updated: float
    message: str = ""
    """The last line the run said (`r002 propose: the skill proposer is investigating`)."""
    bar: TaskBar | None = None
    role: RoleTurns | None = None
    cost_usd: float = 0.0
    """Spent by this run so far, committed steps and the one running."""
    tokens: int = 0
    finished: bool = False
    """The run ended (done, failed or interrupted); a run killed outright leaves it False."""


def turn_line(description: str, turn: int, usage: Usage) -> str:
    """`r001 propose: turn 3 done, 4,512 tokens so far`."""
    return f"{description}: turn {turn} done, {usage.tokens:,} tokens so far"


def progress_path(state_dir: Path) -> Path:
    return state_dir / PROGRESS_FILE


def read_progress(state_dir: Path) -> RunProgress | None:
    """The progress file's content; None when there is none or it is not one this wikiskill writes."""
    try:
        return RunProgress.model_validate_json(progress_path(state_dir).read_bytes())
    except (OSError, ValidationError):
        return None


class ProgressRecorder:
    """A `Reporter` that passes everything on to `inner` and keeps the progress file up to date."""

    def __init__(self, state_dir: Path, inner: Reporter, spend: Callable[[], Usage]):
        self.inner = inner
        self._path = progress_path(state_dir)
        self._spend = spend
        self._lock = threading.Lock()
        now = time.time()
        self._progress = RunProgress(pid=os.getpid(), started=now, updated=now)
        self._write()

    def info(self, message: str) -> None:
        with self._lock:
            self._progress.message, self._progress.role = message, None
            self._write()
        self.inner.info(message)

    def turn(self, description: str, turn: int, usage: Usage) -> None:
        with self._lock:
            self._progress.message = turn_line(description, turn, usage)
            self._progress.role = RoleTurns(description=description, turn=turn, tokens=usage.tokens)
            self._write()
        self.inner.turn(description, turn, usage)

    def preparing(self, done: int, total: int) -> None:
        self.inner.preparing(done, total)

    @contextmanager
    def tasks(self, description: str, total: int) -> Iterator[Callable[[Trajectory], None]]:
        with self.inner.tasks(description, total) as shown:
            bar = TaskBar(description=description, total=total)
            scores: list[float] = []
            with self._lock:
                self._progress.bar = bar
                self._write()

            def done(trajectory: Trajectory) -> None:
                shown(trajectory)
                with self._lock:
                    scores.append(trajectory.score)
                    bar.done, bar.score = len(scores), sum(scores) / len(scores)
                    bar.cost_usd += trajectory.usage.cost_usd
                    self._write()

            try:
                yield done
            finally:
                with self._lock:
                    self._progress.bar = None
                    self._write()

    def finish(self) -> None:
        with self._lock:
            self._progress.finished = True
            self._write()

    def _write(self) -> None:
        spend = self._spend()
        self._progress.cost_usd, self._progress.tokens = spend.cost_usd, spend.tokens
        self._progress.updated = time.time()
        temporary = self._path.with_name(f".{self._path.name}.tmp")  # one writer: it holds the lock
        temporary.write_text(self._progress.model_dump_json(), encoding="utf-8")
        os.replace(temporary, self._path)


@contextmanager
def recording(harness: Harness) -> Iterator[None]:
    """While open, the harness's reporter also keeps the progress file; it is marked finished
    when the block ends, however it ends."""
    reader, meter = harness.reading, harness.evaluating.meter
    recorder = ProgressRecorder(harness.ws.state_dir, reader.reporter, lambda: meter.total)
    reader.reporter = recorder
    try:
        yield
    finally:
        reader.reporter = recorder.inner
        recorder.finish()
