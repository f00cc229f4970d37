"""Applies the file edits a reply wrote as text (`roles/edit_blocks.py`) in the task's
environment, through the same `run` the agent's commands go through (so inside its sandbox or
container), and says what came of each as a tool result would.

An edit may change only a file the task gave (one in the working directory when the task
started), or create one the task names that is not there yet; links are never written through.
"""

from __future__ import annotations

import base64
import difflib
import posixpath
import re
import shlex
from dataclasses import dataclass

from ..environments.base import TaskEnvironment
from ..store.traces import FileEdit
from .edit_blocks import EditRefused, SearchReplace, WholeFile, clean_path, replaced

MAX_FILE_BYTES = 64_000
"""The largest file an edit in a reply reads or writes (its text travels in a command line)."""
COMMAND_TIMEOUT_S = 30.0
_READ_OUTPUT_CHARS = 2 * MAX_FILE_BYTES + 1000
_MISSING, _LINKED, _TOO_LARGE = 3, 4, 5


@dataclass(frozen=True)
class Applied:
    """What one edit came to: the edit made, or the reason it was refused."""

    message: str
    edit: FileEdit | None = None
    unchanged: bool = False
    """The edit gave the file the text it already had."""


class FileEditor:
    """The edits of one task: `given` are the files the working directory held at the start."""

    def __init__(self, environment: TaskEnvironment, given: list[str], question: str):
        self.environment = environment
        self.given = sorted(given)
        self.question = question

    def target(self, written: str | None) -> str:
        """The file an edit may change: the one it names, or the task's one file."""
        if written is None:
            named = [path for path in self.given if _mentions(self.question, path)]
            if len(named) == 1:
                return named[0]
            if len(self.given) == 1:
                return self.given[0]
            raise EditRefused(
                "the block names no file: write the file's path on the line before the fence "
                f"(the files: {', '.join(self.given[:20]) or 'none'})"
            )
        path = clean_path(written)
        if path in self.given or _mentions(self.question, path):
            return path
        raise EditRefused(
            f"{path!r} is not a file of this task: edit one of {', '.join(self.given[:20]) or 'no files'}"
            " (a new file only where the task asks for it)"
        )

    async def apply(self, edit: WholeFile | SearchReplace) -> Applied:
        try:
            path = self.target(edit.path)
            before = await self._read(path)
            if isinstance(edit, WholeFile):
                after = edit.content
            else:
                after = replaced(before or "", edit.search, edit.replace)
            if after == (before or "") and before is not None:
                return Applied(f"{path} is unchanged: the edit gives the text it already has.", unchanged=True)
            await self._write(path, after)
        except EditRefused as refused:
            shown = edit.path or "the unnamed block"
            return Applied(f"Edit of {shown} refused: {refused}. No file was changed.")
        diff = "".join(
            difflib.unified_diff(
                (before or "").splitlines(keepends=True),
                after.splitlines(keepends=True),
                f"a/{path}" if before is not None else "/dev/null",
                f"b/{path}",
            )
        )
        verb = "Created" if before is None else "Edited"
        return Applied(f"{verb} {path}:\n{diff}".rstrip(), FileEdit(path=path, diff=diff))

    async def _read(self, path: str) -> str | None:
        """The file's text, None when it does not exist yet."""
        quoted = shlex.quote(path)
        script = (
            f"{_no_links(path)}; [ -e {quoted} ] || exit {_MISSING}; "
            f"[ $(wc -c < {quoted}) -le {MAX_FILE_BYTES} ] || exit {_TOO_LARGE}; base64 -w0 -- {quoted}"
        )
        result = await self.environment.run(script, COMMAND_TIMEOUT_S, _READ_OUTPUT_CHARS)
        if result.exit_code == _MISSING:
            return None
        self._check(result.exit_code, path)
        try:
            return base64.b64decode(result.output.strip(), validate=True).decode("utf-8")
        except ValueError:
            raise EditRefused(f"{path} is not a UTF-8 text file: change it with a command") from None

    async def _write(self, path: str, text: str) -> None:
        data = text.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise EditRefused(f"the new {path} is over {MAX_FILE_BYTES} bytes: write it with a command")
        quoted, folder = shlex.quote(path), posixpath.dirname(path)
        script = (
            f"{_no_links(path)}; {f'mkdir -p -- {shlex.quote(folder)} && ' if folder else ''}"
            f"printf %s {base64.b64encode(data).decode()} | base64 -d > {quoted}"
        )
        result = await self.environment.run(script, COMMAND_TIMEOUT_S, 2000)
        self._check(result.exit_code, path, result.output)

    @staticmethod
    def _check(exit_code: int | None, path: str, output: str = "") -> None:
        if exit_code == _LINKED:
            raise EditRefused(f"{path} is or lies under a link: links are not written through")
        if exit_code == _TOO_LARGE:
            raise EditRefused(f"{path} is over {MAX_FILE_BYTES} bytes: change it with a command")
        if exit_code != 0:
            raise EditRefused(f"{path} could not be written ({' '.join(output.split())[:200] or exit_code})")


def _no_links(path: str) -> str:
    """A shell check that exits `_LINKED` when `path` or a folder above it is a link."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: count + 1]) for count in range(len(parts))]
    return "; ".join(f"[ ! -L {shlex.quote(prefix)} ] || exit {_LINKED}" for prefix in prefixes)


def _mentions(question: str, path: str) -> bool:
    """Whether the task's text names `path` (as a word, not inside a longer name)."""
    return re.search(rf"(?<![\w./-]){re.escape(path)}(?![\w/-])", question) is not None
