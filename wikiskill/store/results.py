"""The per-task result cache of one step under .wikiskill/results/: a crash never recomputes a
finished task."""

from __future__ import annotations

import os
import uuid
import weakref
from pathlib import Path

from ..core.redact import Scrubber
from .traces import Trajectory


class ResultCache:
    """Finished trajectories of one step, as JSON lines under .wikiskill/results/<key>/.

    Each writer appends to a file of its own, opened once: a task costs one short write, not a
    file of its own. A line that a crash cut short
    does not parse and is skipped, so that task simply runs again. Secrets are scrubbed as in git.
    """

    def __init__(self, root: Path, key: str):
        self.directory = root / "results" / key
        self.directory.mkdir(parents=True, exist_ok=True)
        self._done = self._read()
        self._fd: int | None = None
        self._scrub = Scrubber()

    def _read(self) -> dict[str, Trajectory]:
        done = {}
        for path in sorted(self.directory.glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    trajectory = Trajectory.model_validate_json(line)
                except ValueError:
                    continue
                done[trajectory.task_id] = trajectory
        return done

    def get(self, task_id: str) -> Trajectory | None:
        return self._done.get(task_id)

    def put(self, trajectory: Trajectory) -> None:
        """Keep a finished task; an infrastructure failure is not kept, so the next run retries it."""
        if trajectory.infra:
            return
        if self._fd is None:
            name = f"{os.getpid()}-{uuid.uuid4().hex[:8]}.jsonl"
            self._fd = os.open(self.directory / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            weakref.finalize(self, os.close, self._fd)
        # one write call per line, straight to the kernel: a killed process loses no finished task
        os.write(self._fd, (self._scrub(trajectory.model_dump_json()) + "\n").encode("utf-8"))
        self._done[trajectory.task_id] = trajectory
