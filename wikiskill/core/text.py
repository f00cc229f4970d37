"""A person's text file read as UTF-8, or refused in one line that says where it is not."""

from __future__ import annotations

from pathlib import Path

from .errors import WikiskillError


def read_utf8(path: Path, error: type[WikiskillError]) -> str:
    """The text of `path`; `error` (one line naming the file, the line and the byte) when it is
    not UTF-8. A missing file raises FileNotFoundError, for the caller to word."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(not_utf8(str(path), data, exc)) from None


def not_utf8(source: str, data: bytes, exc: UnicodeDecodeError) -> str:
    """`source, line N (byte offset K): not UTF-8 ...` for the first byte that does not decode."""
    line = data.count(b"\n", 0, exc.start) + 1
    return (
        f"{source}, line {line} (byte offset {exc.start}): not UTF-8 text (byte 0x{data[exc.start]:02x}); "
        "it must be saved as UTF-8"
    )
