"""What is in a task's working directory, as the workdir agent's first prompt shows it.

A small model that is not shown the files invents them: told "implement the function in
solution.py", a 0.5B model wrote a function of its own in its reply and never looked. So the first
prompt lists every file with its size and shows the small text files whole, within a budget of
characters. The listing is a function of `Entry`s (path, size, text), so any source can feed it:
`FolderListing` reads a folder on this machine; `EnvironmentListing` runs `find` and `cat` in any
task environment (a task's container), through the same `run` its agent's commands go through.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..environments.base import TaskEnvironment
from ..environments.host import HostFolder

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


def listing_of(environment: TaskEnvironment) -> WorkdirSource:
    """The source for `environment`: its folder read directly on this machine, else commands in it."""
    if isinstance(environment, HostFolder):
        return FolderListing(environment.path)
    return EnvironmentListing(environment)


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
    readable = [(entry, entry.text) for entry in ordered if entry.text is not None]
    for entry, text in sorted(readable, key=lambda pair: (len(pair[1]), pair[0].path)):
        block = f"--- {entry.path} ---\n{text.rstrip()}\n"
        if len(block) > left:
            left_out.append(entry.path)
            continue
        shown.append(block)
        left -= len(block)
    parts = ["Files in the working directory:", *lines]
    if shown:
        parts += ["", "Their contents:", *sorted(shown)]
    if left_out:
        parts.append(
            f"(not shown, over the listing's budget: {', '.join(left_out[:20])}"
            f"{', ...' if len(left_out) > 20 else ''}; read them with a command)"
        )
    return "\n".join(parts).rstrip()


class FolderListing:
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

    async def entries(self) -> list[Entry]:
        return await asyncio.to_thread(self._entries)

    async def state(self) -> str:
        return await asyncio.to_thread(self._state)

    def _entries(self) -> list[Entry]:
        return [Entry(relative, stat.st_size, _small_text(path, stat)) for relative, path, stat in self._files()]

    def _state(self) -> str:
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


_PRUNED = " -o ".join(f"-name {shlex.quote(name)}" for name in sorted(SKIPPED))
_FIND = f"find . \\( {_PRUNED} \\) -prune -o \\( -type f -o -type l \\) -printf '%y %s %P\\n' | sort -k3 | head -n 1000"
_FILE_MARK = "@@wikiskill-listing-file@@"
COMMAND_TIMEOUT_S = 30.0
OUTPUT_CHARS = 200_000


class EnvironmentListing:
    """The working directory of any task environment, read with `find` and `cat` run in it (GNU
    find, as Debian-based images have): one command lists the files, one prints the small ones."""

    def __init__(self, environment: TaskEnvironment):
        self.environment = environment

    async def _listed(self) -> list[tuple[str, int, str]]:
        result = await self.environment.run(_FIND, COMMAND_TIMEOUT_S, OUTPUT_CHARS)
        listed = []
        for line in result.output.splitlines():
            kind, _, rest = line.partition(" ")
            size, _, path = rest.partition(" ")
            if kind in ("f", "l") and size.isdigit() and path:
                listed.append((kind, int(size), path))
        return listed

    async def entries(self) -> list[Entry]:
        listed = await self._listed()
        small = [path for kind, size, path in listed if kind == "f" and size <= MAX_TEXT_BYTES]
        texts = await self._texts(small) if small else {}
        return [Entry(path, size, texts.get(path)) for _, size, path in listed]

    async def _texts(self, paths: list[str]) -> dict[str, str]:
        script = "; ".join(
            f"printf '\\n{_FILE_MARK} %s\\n' {shlex.quote(path)}; cat -- {shlex.quote(path)}" for path in paths
        )
        result = await self.environment.run(script, COMMAND_TIMEOUT_S, OUTPUT_CHARS)
        texts: dict[str, str] = {}
        for chunk in result.output.split(f"\n{_FILE_MARK} ")[1:]:
            path, _, text = chunk.partition("\n")
            if path in paths and "\0" not in text and "\ufffd" not in text:
                texts[path] = text
        return texts

    async def state(self) -> str:
        result = await self.environment.run(
            f"find . \\( {_PRUNED} \\) -prune -o -type f -printf '%P %s %T@\\n' | sort | sha256sum",
            COMMAND_TIMEOUT_S,
            OUTPUT_CHARS,
        )
        return result.output.strip()


WorkdirSource = FolderListing | EnvironmentListing
"""What the workdir agent reads its working directory through: `entries()` to list it, and
`state()`, a digest that changes when any file is added, removed or changed."""
