"""File edits written in a reply's text, in Aider's edit formats (`agent.edit_format`):

- `whole`: a fenced block holding a file's full new content, the file named on the line before
  the fence (or in the fence's info string, ```python solution.py); an unnamed block is the
  task's one file, as the agent decides.
- `diff`: SEARCH/REPLACE blocks, the file named on the line before them (or before their fence):

      solution.py
      <<<<<<< SEARCH
      old lines
      =======
      new lines
      >>>>>>> REPLACE

Only parsing and pure checks live here: the text of a small model is hostile input (unclosed
fences, paths out of the working directory, markers half written), so nothing here raises but
`EditRefused`, whose message is written for the model to read.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

COMMAND_LANGUAGES = frozenset({"bash", "sh", "shell", "console", "zsh", "json", "jsonc"})
"""Fences that hold a command or a tool call written as text, never a file."""
MAX_PATH_CHARS = 300
SEARCH_MARK = re.compile(r"^\s*<{5,9} ?SEARCH\s*$")
DIVIDER_MARK = re.compile(r"^\s*={5,9}\s*$")
REPLACE_MARK = re.compile(r"^\s*>{5,9} ?REPLACE\s*$")
_FENCE = re.compile(r"^(?P<indent>\s{0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*?)\s*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_TICKED = re.compile(r"`([^`\s]+)`")
AMBIGUOUS = "the SEARCH section is in the file more than once: add the lines around it so it matches one place"


class EditRefused(ValueError):
    """An edit that is not applied; the message says why, to the model."""


@dataclass(frozen=True)
class WholeFile:
    path: str | None
    """As written in the reply (unchecked), or None when the block names no file."""
    content: str


@dataclass(frozen=True)
class SearchReplace:
    path: str | None
    """As written in the reply (unchecked), or None when no file is named before the block."""
    search: str
    replace: str


@dataclass(frozen=True)
class _Fence:
    language: str
    named: str | None
    body: list[str]
    before: str
    """The last non-empty line before the fence."""


def whole_files(text: str | None) -> list[WholeFile]:
    """The closed fenced blocks of `text` that may hold a file (not shell or JSON), in order.
    Blocks holding SEARCH/REPLACE markers are `diff` edits, not files."""
    found = []
    for fence in _fences(text or ""):
        if fence.language in COMMAND_LANGUAGES or any(SEARCH_MARK.match(line) for line in fence.body):
            continue
        content = "".join(line + "\n" for line in fence.body)
        found.append(WholeFile(fence.named or _named(fence.before), content))
    return found


def search_replaces(text: str | None) -> list[SearchReplace]:
    """The complete SEARCH/REPLACE blocks of `text`, fenced or not, in order; a block whose file
    is not named takes the file of the block before it."""
    lines = (text or "").splitlines()
    found: list[SearchReplace] = []
    index = 0
    while index < len(lines):
        if not SEARCH_MARK.match(lines[index]):
            index += 1
            continue
        block = _block_at(lines, index)
        if block is None:
            index += 1
            continue
        search, replace, end = block
        path = _path_before(lines, index) or (found[-1].path if found else None)
        found.append(SearchReplace(path, search, replace))
        index = end + 1
    return found


def clean_path(raw: str) -> str:
    """`raw` as a relative path inside the working directory, `/` between folders; refused when it
    is absolute, climbs out with `..`, or holds control characters."""
    path = raw.strip().replace("\\", "/")
    if not path or len(path) > MAX_PATH_CHARS or _CONTROL.search(path):
        raise EditRefused(f"{raw[:80]!r} is not a file name in the working directory")
    if path.startswith(("/", "~")) or re.match(r"^[a-zA-Z]:", path):
        raise EditRefused(f"{path!r} is outside the working directory: name files relative to it")
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if not parts or ".." in parts or parts[0].startswith("~"):  # `./~` cleaned is `~`, a shell's home
        raise EditRefused(f"{path!r} is outside the working directory: name files relative to it")
    return posixpath.join(*parts)


def replaced(original: str, search: str, replace: str) -> str:
    """`original` with the one occurrence of `search` replaced; an empty `search` on an empty file
    writes `replace`. Lines that differ only in trailing spaces still match. A `search` found in
    more than one place is refused as ambiguous, as Aider does: a small model that copies one
    repeated line would otherwise change whichever copy comes first."""
    if not search.strip():
        if original.strip():
            raise EditRefused("an empty SEARCH section only fills an empty or new file")
        return replace
    at = original.find(search)
    if at >= 0:
        if original.find(search, at + 1) >= 0:
            raise EditRefused(AMBIGUOUS)
        return original[:at] + replace + original[at + len(search) :]
    lines, wanted = original.splitlines(keepends=True), [line.rstrip() for line in search.splitlines()]
    starts = [
        start
        for start in range(len(lines) - len(wanted) + 1)
        if [line.rstrip() for line in lines[start : start + len(wanted)]] == wanted
    ]
    if len(starts) > 1:
        raise EditRefused(AMBIGUOUS)
    if not starts:
        raise EditRefused("the SEARCH section is not in the file: copy the lines exactly as the file has them")
    start, end = starts[0], starts[0] + len(wanted)
    ending = "\n" if lines[end - 1].endswith("\n") else ""
    return "".join(lines[:start]) + replace.rstrip("\n") + ending + "".join(lines[end:])


def _fences(text: str) -> list[_Fence]:
    lines = text.splitlines()
    fences, index, before = [], 0, ""
    while index < len(lines):
        opened = _FENCE.match(lines[index])
        if opened is None:
            if lines[index].strip():
                before = lines[index]
            index += 1
            continue
        mark = opened.group("fence")
        close = next(
            (
                end
                for end in range(index + 1, len(lines))
                if lines[end].strip().startswith(mark[0] * len(mark)) and not lines[end].strip().strip(mark[0])
            ),
            None,
        )
        if close is None:  # unclosed: a reply cut short holds no whole file
            break
        words = opened.group("info").split()
        language = words[0].lower() if words else ""
        named = words[1] if len(words) > 1 else (words[0] if words and _looks_like_file(words[0]) else None)
        fences.append(_Fence(language, named, lines[index + 1 : close], before))
        before, index = "", close + 1
    return fences


def _block_at(lines: list[str], start: int) -> tuple[str, str, int] | None:
    divider = replace_end = None
    for index in range(start + 1, len(lines)):
        if SEARCH_MARK.match(lines[index]):
            return None
        if divider is None and DIVIDER_MARK.match(lines[index]):
            divider = index
        elif divider is not None and REPLACE_MARK.match(lines[index]):
            replace_end = index
            break
    if divider is None or replace_end is None:
        return None
    search = "".join(line + "\n" for line in lines[start + 1 : divider])
    replace = "".join(line + "\n" for line in lines[divider + 1 : replace_end])
    return search, replace, replace_end


def _path_before(lines: list[str], index: int) -> str | None:
    """The file named on the last non-empty line before `index`, skipping one opening fence."""
    for back in range(index - 1, -1, -1):
        line = lines[back]
        if not line.strip():
            continue
        opened = _FENCE.match(line)
        if opened is not None:
            words = opened.group("info").split()
            if len(words) > 1:
                return words[1]
            if words and _looks_like_file(words[0]):
                return words[0]
            continue
        return _named(line)
    return None


def _named(line: str) -> str | None:
    """The file a line before a block names: the whole line stripped of markdown, or its one
    backticked file name (`Here is the new `solution.py`:`)."""
    bare = line.strip().strip("*#:` \t").removeprefix("File:").removeprefix("file:").strip().strip("*`")
    if bare and not any(char.isspace() for char in bare) and _looks_like_file(bare):
        return bare
    ticked = [word for word in _TICKED.findall(line) if _looks_like_file(word)]
    return ticked[0] if len(ticked) == 1 else None


def _looks_like_file(word: str) -> bool:
    return ("." in word.strip(".") or "/" in word) and not word.endswith((".", ","))
