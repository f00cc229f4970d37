"""What a part that reaches outside wikiskill must do: an `ExportTarget` (where `wikiskill export`
writes skill folders for a host agent), a `SessionParser` (how `wikiskill ingest` reads one
format of real session files) and an `ExperimentTracker` (where `evolve` logs its rounds,
`tracking` in wikiskill.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Protocol

from ..core.parts import EXPORT_TARGET, SESSION_FORMAT
from ..core.registry import Registry


class ExportTarget(Protocol):
    kind: ClassVar[str]
    """The `--target` value that picks it."""

    def skills_dir(self, dest: Path) -> Path:
        """The folder the skill folders go into when the user names `dest` (absolute)."""
        ...


class SessionParser(Protocol):
    format: ClassVar[str]
    """The `--format` value that picks it."""

    def messages(self, text: str, name: str) -> list[dict[str, Any]]:
        """The session's messages; raises TranscriptError naming `name` and the line."""


class ExperimentTracker(Protocol):
    """Logs an evolution to an experiment tracker, from what git holds: the loop calls `sync()`
    after the baseline and after each round and passes it nothing."""

    def sync(self) -> None:
        """Log what is in git and not yet logged: the baseline, every closed round."""
        ...

    def finish(self) -> None:
        """The run ended without error: mark it finished."""
        ...


EXPORT_TARGETS = Registry(EXPORT_TARGET, ExportTarget)
SESSION_FORMATS = Registry(SESSION_FORMAT, SessionParser)
