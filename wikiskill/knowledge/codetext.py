"""Whether a text the wiki is asked to keep as prose is code instead.

A weak maintainer pastes what it saw: a 0.5B model's log section for a round was the Python
function of a trace, with no word about the round. A text is *code-only* when most of its
non-blank lines (more than `CODE_SHARE`) are code lines, where a line counts as code when it

- is a fence line (```) or lies inside a fenced block;
- is indented by a tab or four spaces and is not a list item (Markdown's indented code);
- starts like a statement (`def`, `class`, `import`, `return`, `for ...:`, `#include`, ...) or
  an assignment or call (`x = ...`, `total += n`, `print(x)`);
- is mostly symbols: it has some, and fewer than half of its visible characters are letters
  (`}`, `);`, `[1, 2]`; a bare number is no code).

Ordinary prose about code is kept: a sentence that names `has_close_elements()` in backticks,
a list of pages written, a line with a task id.
"""

from __future__ import annotations

import re

CODE_SHARE = 0.5
"""A text whose code lines are more than this share of its non-blank lines is code-only."""
_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST_ITEM = re.compile(r"^\s*([-*+]|\d+[.)])\s")
_STATEMENT = re.compile(
    r"^\s*(def\s|class\s|import\s|from\s+[\w.]+\s+import\s|return\b|raise\b|assert\s|yield\b|"
    r"(el)?if\s.*:\s*$|else\s*:|try\s*:|except\b.*:\s*$|finally\s*:|(with|for|while)\s.*:\s*$|async\s+def\s|"
    r"lambda\b|@\w+|#include|#!|function\b|const\s|let\s|var\s|public\s|private\s|fn\s|func\s)"
)
_ASSIGNMENT_OR_CALL = re.compile(r"^\s*[A-Za-z_][\w.\[\]]*(\s*[-+*/%|&]?=(?!=)|\()")
"""`x = 1`, `total += n`, `foo.bar(x)`: one identifier, then an assignment or a call's bracket."""


def code_lines(text: str) -> tuple[int, int]:
    """(code lines, non-blank lines) of `text`."""
    code = lines = 0
    fenced = False
    for line in text.splitlines():
        if not line.strip():
            continue
        lines += 1
        if _FENCE.match(line):
            fenced = not fenced
            code += 1
        elif fenced or _looks_like_code(line):
            code += 1
    return code, lines


def code_only(text: str) -> bool:
    """Whether `text` is mostly code rather than prose (see the module's docstring)."""
    code, lines = code_lines(text)
    return code > CODE_SHARE * lines


def _looks_like_code(line: str) -> bool:
    if _LIST_ITEM.match(line):
        return False
    if line.startswith(("\t", "    ")):
        return True
    if _STATEMENT.match(line) or _ASSIGNMENT_OR_CALL.match(line):
        return True
    visible = [char for char in line if not char.isspace()]
    symbols = any(not char.isalnum() for char in visible)
    return symbols and sum(char.isalpha() for char in visible) < len(visible) / 2
