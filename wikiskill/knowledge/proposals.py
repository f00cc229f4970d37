"""Turn a proposer's raw proposal into file changes under skills/<name>/, or a reasoned rejection."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

import yaml
from pydantic import BaseModel, Field

from .edits import Edit, apply_edits, parse_edits
from ..core.errors import ProposalError
from .pages import Page, page_slug
from ..core.redact import scrub
from .skills import normalize_name, skill_problems, with_front_matter
from .wiki import resolve

MAX_SKILL_CHARS = 20_000
MAX_RATIONALE_CHARS = 2_000
PATCHABLE = ("SKILL.md", "PURPOSE.md")
HISTORY = "## Evolution History"


class SkillEdit(Edit):
    file: Literal["SKILL.md", "PURPOSE.md"] = "SKILL.md"


class CreateSkill(BaseModel):
    """Create a skill (or rewrite one). SKILL.md is built from the four parts, or given whole."""

    action: Literal["create"]
    name: str = Field(description="lowercase letters, digits and single hyphens, at most 64 characters")
    description: str = Field(description="what the skill does and when to use it (one or two sentences)")
    when_to_apply: str = Field(description="the situations the skill is for")
    when_not_to_apply: str = Field(description="the situations it is not for")
    instructions: str = Field(description="concrete, numbered steps: exact actions, not vague advice")
    rationale: str = Field(description="why this change should fix the failures, citing task ids")
    skill_md: str = Field("", description="instead of the four parts: the full SKILL.md (YAML front matter "
                                          "with name and description, then the three sections)")
    purpose_md: str = Field("", description="the full PURPOSE.md: ## Origin, ## Patterns Addressed (links to "
                                            "wiki/patterns/<slug>.md) and ## Evolution History")


class PatchSkill(BaseModel):
    """Edit an existing skill's SKILL.md or PURPOSE.md."""

    action: Literal["patch"]
    name: str = Field(description="an existing skill's name")
    edits: list[SkillEdit] = Field(description="edits whose `target` is exact existing text (not needed to append)")
    rationale: str


class RetireSkill(BaseModel):
    """Remove a skill that no longer earns its place in the prompt (merged when the candidate
    scores at least the incumbent: a smaller prompt at an equal score is a gain)."""

    action: Literal["retire"]
    name: str = Field(description="an existing skill's name")
    rationale: str


class NoAction(BaseModel):
    """Change nothing: no change is likely to help."""

    action: Literal["no_action"]
    rationale: str


class ProposalSchema(BaseModel):
    """The arguments of `finish`: your one proposal."""

    proposal: CreateSkill | PatchSkill | RetireSkill | NoAction


class InvalidProposal(ProposalError):
    """A proposal that cannot be applied; `action` and `name` are kept for skill-impact.md."""

    def __init__(self, reason: str, action: str = "invalid", name: str = "", rationale: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.action = action
        self.name = name
        self.rationale = rationale


@dataclass
class Proposal:
    action: str
    name: str = ""
    rationale: str = ""
    changes: dict[str, str | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def skill_dir(name: str) -> str:
    return f"skills/{name}"


def prepare_proposal(raw: object, skill_files: dict[str, str], round_number: int) -> Proposal:
    """Validate `raw` against the skills on main (`{path under skills/: text}`).

    Raises InvalidProposal with the reason; nothing outside skills/<name>/ can ever be changed.
    """
    if not isinstance(raw, dict):
        raise InvalidProposal(f"the proposal must be a JSON object, got {type(raw).__name__}")
    action = raw.get("action")
    rationale = raw.get("rationale") if isinstance(raw.get("rationale"), str) else ""
    rationale = " ".join(rationale.split())[:MAX_RATIONALE_CHARS]
    if action == "no_action":
        return Proposal("no_action", rationale=rationale)
    if action not in ("create", "patch", "retire"):
        raise InvalidProposal(f"unknown action {str(action)[:40]!r}: use create, patch, retire or no_action",
                              rationale=rationale)
    raw_name = raw.get("name")
    try:
        name = normalize_name(raw_name)
    except ProposalError as exc:
        raise InvalidProposal(str(exc), action, str(raw_name)[:64], rationale) from None
    if scrub(name) != name:
        raise InvalidProposal("the skill name contains a secret", action, "(redacted)", rationale)
    if name in skill_files:
        raise InvalidProposal(f"skills/{name} is an existing file, not a skill folder", action, name, rationale)
    proposal = Proposal(action, name, rationale)
    if name != raw_name:
        proposal.notes.append(f"name {str(raw_name)[:80]!r} normalised to {name!r}")
    try:
        if action == "create":
            _create(proposal, raw, skill_files, round_number)
        elif action == "retire":
            _retire(proposal, skill_files)
        else:
            _patch(proposal, raw, skill_files, round_number)
    except InvalidProposal as exc:
        exc.action, exc.name, exc.rationale = action, name, rationale
        raise
    return proposal


def _text_field(raw: dict, key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InvalidProposal(f"`{key}` must be a non-empty string")
    if len(value) > MAX_SKILL_CHARS:
        raise InvalidProposal(f"`{key}` is longer than {MAX_SKILL_CHARS} characters")
    return value


SKILL_PARTS = {"when_to_apply": "When to Apply", "when_not_to_apply": "When NOT to Apply",
               "instructions": "Instructions"}


def _skill_md(raw: dict, name: str, notes: list[str]) -> str:
    """The proposal's SKILL.md: given whole, or built from its description and three sections.
    A `skill_md` that is no SKILL.md (no front matter) next to all four parts gives way to them:
    small models fill in every field they are shown."""
    given_whole = raw.get("skill_md") not in (None, "")
    parts = ("description", *SKILL_PARTS)
    if given_whole and all(isinstance(raw.get(key), str) and raw[key].strip() for key in parts) \
            and not str(raw["skill_md"]).lstrip().startswith("---"):
        notes.append("`skill_md` has no front matter: SKILL.md is built from description and the three sections")
    elif given_whole or not any(key in raw for key in parts):
        return _text_field(raw, "skill_md")
    front = yaml.safe_dump({"name": name, "description": " ".join(_text_field(raw, "description").split())},
                           sort_keys=False, allow_unicode=True, width=1000).strip()
    sections = "\n\n".join(f"## {title}\n{_text_field(raw, key).strip()}" for key, title in SKILL_PARTS.items())
    return f"---\n{front}\n---\n\n{sections}\n"


def _checked_skill(text: str, name: str, round_number: int) -> str:
    try:
        text = with_front_matter(text, name, {"wikiskill-round": str(round_number)})
    except ValueError as exc:
        raise InvalidProposal(f"SKILL.md: {exc}") from None
    except RecursionError:  # PyYAML recurses once per nesting level
        raise InvalidProposal("SKILL.md: front matter is nested too deeply") from None
    problems = skill_problems(text, name)
    if problems:
        raise InvalidProposal(f"SKILL.md breaks the Agent Skills rules: {'; '.join(problems)}")
    return text


def _create(proposal: Proposal, raw: dict, skill_files: dict[str, str], round_number: int) -> None:
    name = proposal.name
    if f"{name}/SKILL.md" in skill_files:
        proposal.notes.append(f"skill {name!r} exists: this create rewrites it")
    skill_md = _checked_skill(_skill_md(raw, name, proposal.notes), name, round_number)
    purpose = raw.get("purpose_md") if isinstance(raw.get("purpose_md"), str) else ""
    if len(purpose) > MAX_SKILL_CHARS:
        raise InvalidProposal(f"`purpose_md` is longer than {MAX_SKILL_CHARS} characters")
    purpose = purpose.strip() or f"# {name}\n\n## Origin\n\nProposed in round {round_number}."
    verb = "rewritten" if f"{name}/SKILL.md" in skill_files else "created"
    proposal.changes = {
        f"{skill_dir(name)}/SKILL.md": skill_md,
        f"{skill_dir(name)}/PURPOSE.md": add_history(purpose, round_number, f"{verb}: {proposal.rationale or 'no rationale given'}"),
    }


def _patch(proposal: Proposal, raw: dict, skill_files: dict[str, str], round_number: int) -> None:
    name = proposal.name
    if f"{name}/SKILL.md" not in skill_files:
        raise InvalidProposal(f"cannot patch {name!r}: no such skill (create it instead)")
    edits_by_file: dict[str, list] = {}
    raw_edits = raw.get("edits")
    if not isinstance(raw_edits, list) or not raw_edits:
        raise InvalidProposal("a patch needs a non-empty `edits` list")
    for item in raw_edits:
        target_file = item.get("file", "SKILL.md") if isinstance(item, dict) else "SKILL.md"
        if target_file not in PATCHABLE:
            raise InvalidProposal(f"edit file {str(target_file)[:60]!r} is not allowed: use SKILL.md or PURPOSE.md")
        edits_by_file.setdefault(target_file, []).append(item)
    texts = {file: skill_files.get(f"{name}/{file}", "") for file in PATCHABLE}
    applied = 0
    for file, items in edits_by_file.items():
        edits, problems = parse_edits(items)
        new_text, skipped = apply_edits(texts[file], edits)
        proposal.notes += [f"{file}: {p}" for p in problems + skipped]
        applied += len(edits) - len(skipped)
        texts[file] = new_text
    if not applied:
        raise InvalidProposal(f"no edit applied ({'; '.join(proposal.notes[-3:]) or 'no valid edits'})")
    for file in PATCHABLE:
        if len(texts[file]) > MAX_SKILL_CHARS:
            raise InvalidProposal(f"the patched {file} is longer than {MAX_SKILL_CHARS} characters")
    proposal.changes = {
        f"{skill_dir(name)}/SKILL.md": _checked_skill(texts["SKILL.md"], name, round_number),
        f"{skill_dir(name)}/PURPOSE.md": add_history(
            texts["PURPOSE.md"] or f"# {name}\n", round_number, f"patched: {proposal.rationale or 'no rationale given'}"),
    }


def _retire(proposal: Proposal, skill_files: dict[str, str]) -> None:
    """Remove the skill's whole folder (it stays in history and in skill-impact.md)."""
    prefix = f"{proposal.name}/"
    if f"{prefix}SKILL.md" not in skill_files:
        raise InvalidProposal(f"cannot retire {proposal.name!r}: no such skill")
    proposal.changes = {f"skills/{path}": None for path in skill_files if path.startswith(prefix)}


def add_history(purpose: str, round_number: int, line: str) -> str:
    """Append a line to PURPOSE.md's Evolution History (adding the section when missing)."""
    entry = f"- r{round_number:03d} {line}"
    text = purpose.rstrip()
    if HISTORY.lower() not in text.lower():
        text += f"\n\n{HISTORY}\n"
    return f"{text}\n{entry}\n"


PATTERNS_ADDRESSED = "## Patterns Addressed"
_PAGE_MENTION = re.compile(r"wiki/patterns/([A-Za-z0-9_-]+)")


def addressed_pages(purpose: str, rationale: str, name: str, pages: dict[str, Page]) -> list[str]:
    """Active pages a skill addresses: linked from its PURPOSE.md, named in the rationale, or
    listing the skill in their front matter (merged pages count as the page they went into)."""
    named = set(_PAGE_MENTION.findall(f"{purpose}\n{rationale}"))
    named |= {slug for slug, page in pages.items() if name in page.meta.skills}
    slugs = {resolve(pages, page_slug(slug)) for slug in named if re.search(r"[A-Za-z0-9]", slug)}
    return sorted(slug for slug in slugs if slug in pages and pages[slug].active)


def record_decision(purpose: str, name: str, round_number: int, action: str, decision: str, candidate: float,
                    incumbent: float, addressed: list[str], pages: dict[str, Page], helped: int, hurt: int) -> str:
    """PURPOSE.md after the gate: Patterns Addressed rebuilt from the wiki, and one Evolution
    History line with the round, action, decision, scores and the val tasks it helped and hurt."""
    lines = [f"- [{pages[slug].meta.title}](../../wiki/patterns/{slug}.md): {pages[slug].meta.summary}"
             for slug in addressed] or ["(no wiki page linked)"]
    text = replace_section(purpose or f"# {name}\n", PATTERNS_ADDRESSED, "\n".join(lines))
    return add_history(text, round_number, f"{action} {decision}: val {candidate:.3f}, incumbent {incumbent:.3f}; "
                                           f"helped {helped} val task(s), hurt {hurt}")


def replace_section(text: str, heading: str, body: str) -> str:
    """`text` with the section under `heading` replaced (added before Evolution History when missing)."""
    pattern = re.compile(rf"^{re.escape(heading)}[ \t]*\n(.*?)(?=^#{{1,2}} |\Z)", re.MULTILINE | re.DOTALL | re.IGNORECASE)
    section = f"{heading}\n\n{body.strip()}\n\n"
    if pattern.search(text):
        return pattern.sub(lambda match: section, text, count=1).rstrip() + "\n"
    history = text.lower().find(HISTORY.lower())
    if history == -1:
        return f"{text.rstrip()}\n\n{section}".rstrip() + "\n"
    return f"{text[:history]}{section}{text[history:]}"
