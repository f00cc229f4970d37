"""The offline maintainer's duplicate rule: a page whose mined pattern another page's pattern of
the same rule covers (`take * from *` covers `take apple from table`) merges into that page."""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from ...knowledge.pages import Page


def _rule(page: Page) -> tuple[str, str] | None:
    extra = page.meta.model_extra or {}
    rule, pattern = extra.get("rule"), extra.get("pattern")
    return (rule, pattern) if isinstance(rule, str) and isinstance(pattern, str) else None


@dataclass(frozen=True)
class PatternCover:
    def keeper(self, a: Page, b: Page) -> Page | None:
        first, second = _rule(a), _rule(b)
        if first is None or second is None or first[0] != second[0] or first[1] == second[1]:
            return None
        if fnmatchcase(first[1], second[1]):
            return b
        if fnmatchcase(second[1], first[1]):
            return a
        return None
