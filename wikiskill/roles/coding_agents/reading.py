"""What the CLI transcript readers share: the JSON objects among a CLI's stdout lines, the skills
a tool call loads by naming their SKILL.md, and OpenAI-style tool calls."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

SKILL_FILE = re.compile(r"([^/\\\s'\"`]+)[/\\]SKILL\.md\b")
"""A path naming a skill's SKILL.md: the folder before it is the skill's name."""
Event = dict[str, Any]
"""A JSON object among a CLI's stdout lines, as the CLI printed it: its values are unchecked, each
reader tests what it takes."""


def events(lines: Iterable[str]) -> list[Event]:
    """The JSON objects among `lines`, in order; noise (warnings, a cut-off last line) is skipped."""
    found: list[Event] = []
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def strings(value: object) -> list[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    return []


def skills_read(arguments: object, skills: Sequence[str]) -> list[str]:
    """The copied `skills` whose `<name>/SKILL.md` a tool call's arguments name (a file read, a
    shell command)."""
    return [name for text in strings(arguments) for name in SKILL_FILE.findall(text) if name in skills]


def note(loaded: list[str], names: Iterable[str]) -> None:
    """Add `names` to `loaded`, each once, in the order first loaded."""
    loaded.extend(name for name in names if name not in loaded)


def root_url(api_base: str, suffixes: Sequence[str]) -> str:
    """`api_base` without a trailing version path that the CLI's own client appends itself."""
    base = api_base.rstrip("/")
    for suffix in suffixes:
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def function_call(call_id: str, name: str, arguments: object) -> dict[str, object]:
    """An OpenAI-style tool call."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}
