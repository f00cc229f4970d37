"""Text edits that models return: `append`, `replace` and `insert_after` on exact substrings.

An edit that does not apply is skipped with a reason, never half-applied.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ..core.errors import first_problem


class Edit(BaseModel):
    model_config = ConfigDict(extra="ignore")

    op: Literal["append", "replace", "insert_after"]
    content: str
    target: str | None = None


E = TypeVar("E", bound=Edit)


def parse_edits(raw: object, model: type[E]) -> tuple[list[E], list[str]]:
    """Valid edits (of `model`, an Edit with more fields) and the reasons the others were dropped."""
    if not isinstance(raw, list):
        return [], [f"edits must be a list, got {type(raw).__name__}"]
    edits: list[E] = []
    problems: list[str] = []
    for index, item in enumerate(raw):
        try:
            edits.append(model.model_validate(item))
        except ValidationError as exc:
            problems.append(f"edit {index + 1}: {first_problem(exc, 'edit')}")
    return edits, problems


def apply_edit(text: str, edit: Edit) -> str:
    """Apply one edit; raise ValueError with a readable reason when it cannot apply."""
    if edit.op == "append":
        separator = "" if not text or text.endswith("\n") else "\n"
        return f"{text}{separator}{edit.content.rstrip()}\n"
    if not edit.target:
        raise ValueError(f"{edit.op} needs a non-empty target")
    count = text.count(edit.target)
    if count == 0:
        raise ValueError(f"{edit.op} target not found: {edit.target[:60]!r}")
    if count > 1:
        raise ValueError(f"{edit.op} target is ambiguous ({count} matches): {edit.target[:60]!r}")
    if edit.op == "replace":
        return text.replace(edit.target, edit.content, 1)
    return text.replace(edit.target, edit.target + edit.content, 1)


def apply_edits(text: str, edits: Sequence[Edit]) -> tuple[str, list[str]]:
    """Apply the edits in order; return the new text and the reasons for skipped edits."""
    skipped = []
    for index, edit in enumerate(edits):
        try:
            text = apply_edit(text, edit)
        except ValueError as exc:
            skipped.append(f"edit {index + 1}: {exc}")
    return text, skipped
