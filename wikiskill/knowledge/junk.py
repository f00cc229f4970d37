"""Proposals refused as junk before they cost a validation run.

A weak model that has not understood the task copies what it was shown: a 0.5B model proposed
`create skill-impact` (the wiki's skill-impact.md, its description as the body), `train-04` (a
task id) and `skill-name` (the example's own placeholder). Each would have cost a full validation
before the gate rejected it. A created skill is refused when

- its name is a task id of the suite, the name of a wiki or workspace file, or a placeholder,
  field or description of the proposal schema (`reserved_names`);
- its description and body mostly repeat the schema's descriptions and placeholders or the
  fixed text of the prompt (`REPEATED_SHARE` of their word triples);
- its description does not say when to use the skill (no word such as "when", "if", "before").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..core.errors import ProposalError
from .proposals import CREATE_EXAMPLE, PATCHABLE, CreateSkill, Proposal, ProposalSchema, skill_dir
from .search import words
from .skills import normalize_name, parse_skill

REPEATED_SHARE = 0.6
"""A body whose word triples are at least this share copied from the prompt or schema is junk."""
WHEN = re.compile(
    r"\b(when|whenever|if|before|after|while|during|unless|once|until|for|use|using|apply|applies)\b", re.IGNORECASE
)
"""Words that tell when a description's skill applies."""
_PLACEHOLDER = re.compile(r"<([^<>\n]{1,80})>")
SCHEMA_PARTS = (
    "a placeholder of the proposal schema",
    "a description in the proposal schema",
    "a field of the proposal schema",
)
WEAK_PROPOSER = (
    "the proposer's model looks too weak for the role: try a larger `proposer.model` (the roles may use "
    "another model than the agent)"
)


@dataclass(frozen=True)
class Known:
    """What a round's proposal is checked against: names a skill may not take, with what each is,
    and the prompt's fixed text a body may not mostly repeat."""

    names: dict[str, str] = field(default_factory=dict)
    prompt: list[str] = field(default_factory=list)


def schema_texts() -> list[str]:
    """The proposal schema's own words: every description in it and the example's placeholders."""
    texts: list[str] = []

    def collect(node: object) -> None:
        if isinstance(node, dict):
            texts.extend(value for key, value in node.items() if key == "description" and isinstance(value, str))
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    collect(ProposalSchema.model_json_schema())
    return texts + [str(value) for value in CREATE_EXAMPLE.values()]


def reserved_names(task_ids: Iterable[str], files: Iterable[str]) -> dict[str, str]:
    """Names no skill may take: the suite's task ids, the stems of workspace and wiki `files`
    (paths), the skill folder's own files, and the schema's placeholders, fields and descriptions."""
    names: dict[str, str] = {}

    def add(raw: str, what: str) -> None:
        try:
            names.setdefault(normalize_name(raw), what)
        except ProposalError:
            pass

    for task_id in task_ids:
        add(task_id, "a task id of the suite")
    for path in files:
        add(path.rsplit("/", 1)[-1].split(".", 1)[0], f"the workspace file {path}")
    for file in PATCHABLE:
        add(file.split(".", 1)[0], f"the skill folder's file {file}")
    placeholder, description, field_name = SCHEMA_PARTS
    for text in schema_texts():
        for found in _PLACEHOLDER.findall(text):
            add(found, placeholder)
        if len(text) <= 80:
            add(text, description)
    for name in CreateSkill.model_fields:
        add(name, field_name)
    return names


def junk_reason(proposal: Proposal, known: Known) -> str | None:
    """Why a created skill is junk, or None (other actions name an existing skill or none)."""
    if not isinstance(proposal.request, CreateSkill):
        return None
    name = proposal.name
    if name in known.names:
        weak = f": {WEAK_PROPOSER}" if known.names[name] in SCHEMA_PARTS else ""
        return f"`{name}` is {known.names[name]}, not a skill name{weak}"
    skill = parse_skill(proposal.changes[f"{skill_dir(name)}/SKILL.md"] or "")  # a create always writes it
    body = "\n".join(line for line in skill.body.splitlines() if not line.lstrip().startswith("#"))
    share = repeated_share(f"{skill.description}\n{body}", [*schema_texts(), *known.prompt])
    if share >= REPEATED_SHARE:
        return (
            f"the skill's description and body repeat the proposal schema or the prompt ({share:.0%} of "
            f"their words), not what was learned from the traces: {WEAK_PROPOSER}"
        )
    if not WHEN.search(skill.description):
        return f'the description {skill.description[:120]!r} does not say when to use the skill (e.g. "Use when ...")'
    return None


def repeated_share(text: str, sources: list[str]) -> float:
    """The share of `text`'s word triples (its words, when it has fewer than three) found in
    `sources`."""
    items = words(text)
    size = 3 if len(items) >= 3 else 1
    own = _grams(items, size)
    if not own:
        return 0.0
    seen = set().union(*(_grams(words(source), size) for source in sources))
    return sum(gram in seen for gram in own) / len(own)


def _grams(items: list[str], size: int) -> list[tuple[str, ...]]:
    return [tuple(items[i : i + size]) for i in range(len(items) - size + 1)]
