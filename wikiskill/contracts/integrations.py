"""What a part that reaches outside wikiskill must do: an `ExportTarget` (where `wikiskill export`
writes skill folders for a host agent) and a `SessionParser` (how `wikiskill ingest` reads one
format of real session files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Protocol


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
