"""The rule lines that offline skills carry, readable by people and LLMs and parsed by the
offline agent:

    - Prefer `take * from *` whenever it is available.
    - Avoid `eat *` (except `eat meal`).

Patterns are shell-style globs over whole actions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from ...knowledge.skills import Skill

_RULE = re.compile(r"^\s*(?:[-*]|\d+\.)\s*(Prefer|Avoid)\s+`([^`]+)`(.*)$", re.IGNORECASE)
_QUOTED = re.compile(r"`([^`]+)`")
PREPOSITIONS = ("from", "with", "into", "in", "on", "to")


@dataclass(frozen=True)
class Rule:
    kind: str  # prefer | avoid
    pattern: str
    exceptions: tuple[str, ...] = ()
    skill: str = ""

    def matches(self, action: str) -> bool:
        return fnmatchcase(action, self.pattern) and not any(fnmatchcase(action, e) for e in self.exceptions)


def rule_line(kind: str, pattern: str, exceptions: list[str] | tuple[str, ...] = ()) -> str:
    if kind == "prefer":
        return f"- Prefer `{pattern}` whenever it is available."
    unless = f" (except {', '.join(f'`{e}`' for e in exceptions)})" if exceptions else ""
    return f"- Avoid `{pattern}`{unless}."


def parse_rules(skills: list[Skill]) -> list[Rule]:
    """Rules from the Instructions of every skill, in skill order then line order."""
    rules = []
    for skill in skills:
        for line in skill.section("Instructions").splitlines():
            match = _RULE.match(line)
            if match:
                rest = match.group(3)
                exceptions = tuple(_QUOTED.findall(rest.split("except", 1)[1])) if "except" in rest else ()
                rules.append(Rule(match.group(1).lower(), match.group(2).strip(), exceptions, skill.name))
    return rules


@dataclass
class ActionShape:
    verb: str
    obj: str
    prep: str = ""
    target: str = ""


def shape(action: str) -> ActionShape:
    words = action.split()
    if not words:
        return ActionShape("", "")
    for index, word in enumerate(words[1:], 1):
        if word in PREPOSITIONS:
            return ActionShape(words[0], " ".join(words[1:index]), word, " ".join(words[index + 1 :]))
    return ActionShape(words[0], " ".join(words[1:]))


def shape_key(action: str) -> tuple[str, str]:
    s = shape(action)
    return s.verb, s.prep


def generalize(actions: list[str], tasks: int) -> str:
    """One glob for actions sharing a verb: a part stays literal when it is the same in every
    action and seen in at least two tasks; otherwise it becomes `*`."""
    shapes = [shape(a) for a in actions]
    first = shapes[0]

    def part(values: set[str]) -> str:
        return values.pop() if len(values) == 1 and tasks >= 2 else "*"

    obj = part({s.obj for s in shapes})
    pattern = f"{first.verb} {obj}".strip() if first.obj or obj != "*" else first.verb
    if first.prep:
        pattern += f" {first.prep} {part({s.target for s in shapes}) if tasks >= 2 else first.target}"
    return pattern


@dataclass
class Group:
    """Actions of one verb (and preposition) with the tasks they came from."""

    key: tuple[str, str]
    actions: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)

    def pattern(self) -> str:
        return generalize(self.actions, len(set(self.tasks)))


def group_actions(events: list[tuple[str, str]]) -> list[Group]:
    """Group (task id, action) events by verb and preposition, biggest group first."""
    groups: dict[tuple[str, str], Group] = {}
    for task_id, action in events:
        key = shape_key(action)
        group = groups.setdefault(key, Group(key))
        group.actions.append(action)
        group.tasks.append(task_id)
    return sorted(groups.values(), key=lambda g: (-len(set(g.tasks)), g.key))
