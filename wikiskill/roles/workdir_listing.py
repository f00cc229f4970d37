"""What is in a task's working directory, as the workdir agent's first prompt shows it.

A small model that is not shown the files invents them: told "implement the function in
solution.py", a 0.5B model wrote a function of its own in its reply and never looked. So the first
prompt lists every file with its size and shows the small text files whole, within a budget of
characters. The listing is a function of `Entry`s (path, size, text), so any source can feed it:
`HostFolder` reads a folder on this machine; a container's would run `find` and `cat` inside it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

LISTING_CHARS = 6000
"""The most characters of file text the listing shows."""
MAX_TEXT_BYTES = 4000
"""A file is shown whole only when it is at most this large."""
MAX_LISTED = 200
"""The most entries listed by name."""
SKIPPED = frozenset({".git", "__pycache__", ".pytest_cache", ".mypy_cache", "node_modules", ".venv"})
"""Folders whose contents are neither listed nor watched for changes."""


@dataclass(frozen=True)
class Entry:
    path: str
    """Relative to the working directory, with `/` between folders."""
    size: int
    """Bytes."""
    text: str | None = None
    """The whole file when it is small UTF-8 text, else None (too large, binary, a link)."""


class WorkdirSource(Protocol):
    """What the workdir agent needs to know about its working directory."""

    def entries(self) -> list[Entry]: ...

    def state(self) -> str:
        """A digest that changes when any file is added, removed or changed."""
        ...


def render_listing(entries: Iterable[Entry], chars: int = LISTING_CHARS) -> str:
    """The files by name and size, then the text of the small ones, smallest first, while `chars`
    lasts; a file left out for the budget is named."""
    ordered = sorted(entries, key=lambda entry: entry.path)
    if not ordered:
        return "The working directory is empty."
    lines = [f"{entry.path} ({entry.size} bytes)" for entry in ordered[:MAX_LISTED]]
    if len(ordered) > MAX_LISTED:
        lines.append(f"... and {len(ordered) - MAX_LISTED} more")
    shown, left_out, left = [], [], chars
    for entry in sorted((e for e in ordered if e.text is not None), key=lambda e: (len(e.text or ""), e.path)):
        block = f"--- {entry.path} ---\n{entry.text.rstrip()}\n"
        if len(block) > left:
            left_out.append(entry.path)
            continue
        shown.append(block)
        left -= len(block)
    parts = ["Files in the working directory:", *lines]
    if shown:
        parts += ["", "Their contents:", *sorted(shown)]
    if left_out:
        parts.append(f"(not shown, over the listing's budget: {', '.join(left_out[:20])}"
                     f"{', ...' if len(left_out) > 20 else ''}; read them with a command)")
    return "\n".join(parts).rstrip()


class HostFolder:
    """A working directory on this machine, walked without following links."""

    def __init__(self, root: Path):
        self.root = root

    def _files(self) -> Iterable[tuple[str, Path, os.stat_result]]:
        for folder, folders, files in os.walk(self.root):
            folders[:] = sorted(name for name in folders if name not in SKIPPED)
            for name in sorted(files):
                path = Path(folder) / name
                try:
                    stat = path.lstat()
                except OSError:
                    continue
                yield path.relative_to(self.root).as_posix(), path, stat

    def entries(self) -> list[Entry]:
        return [Entry(relative, stat.st_size, _small_text(path, stat)) for relative, path, stat in self._files()]

    def state(self) -> str:
        digest = hashlib.sha256()
        for relative, path, stat in self._files():
            digest.update(f"{relative}\0{stat.st_mode}\0{stat.st_size}\0".encode())
            if path.is_file() and not path.is_symlink():
                try:
                    with path.open("rb") as handle:
                        digest.update(hashlib.file_digest(handle, "sha256").digest())
                except OSError:
                    digest.update(str(stat.st_mtime_ns).encode())
        return digest.hexdigest()


def _small_text(path: Path, stat: os.stat_result) -> str | None:
    if path.is_symlink() or not path.is_file() or stat.st_size > MAX_TEXT_BYTES:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
