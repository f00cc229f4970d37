"""The page model of `wiki/patterns/<slug>.md`: typed front matter plus four required sections.

A page on disk is YAML front matter, a `# Title`, one line derived from the front matter (how many
episodes and rounds it was seen in, or where it was merged to), then the sections
`## Description`, `## Root cause`, `## Evidence` and `## Fix`. Counts are never kept as prose:
they are rendered from the evidence list each time the page is written.
"""

from __future__ import annotations

import re
from enum import StrEnum

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.errors import ProposalError
from .skills import normalize_name, split_front_matter

PATTERNS = "wiki/patterns"


class PageKind(StrEnum):
    FAILURE = "failure"
    SUCCESS = "success"


class PageStatus(StrEnum):
    ACTIVE = "active"
    MERGED = "merged"
    RETIRED = "retired"


class Section(StrEnum):
    DESCRIPTION = "Description"
    ROOT_CAUSE = "Root cause"
    EVIDENCE = "Evidence"
    FIX = "Fix"


SECTION_ALIASES: dict[str, Section] = {
    "description": Section.DESCRIPTION,
    "problem": Section.DESCRIPTION,
    "what": Section.DESCRIPTION,
    "root cause": Section.ROOT_CAUSE,
    "root-cause": Section.ROOT_CAUSE,
    "why": Section.ROOT_CAUSE,
    "cause": Section.ROOT_CAUSE,
    "evidence": Section.EVIDENCE,
    "exact action": Section.EVIDENCE,
    "action sequence": Section.EVIDENCE,
    "fix": Section.FIX,
    "solution": Section.FIX,
    "known solution": Section.FIX,
    "workaround": Section.FIX,
}
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_DERIVED = re.compile(r"^_(Seen in|Merged into|Retired in) .*_$")


def page_slug(raw: object) -> str:
    """The one name normaliser for pages: `Patterns/Encoding Rule.md` -> `encoding-rule`.

    Strips a leading `wiki/` and `patterns/`, a trailing `.md`, case and spaces; raises
    ProposalError when nothing valid remains."""
    if not isinstance(raw, str):
        raise ProposalError(f"page name must be a string, got {type(raw).__name__}")
    name = raw.strip().lower().lstrip("./")
    for prefix in ("wiki/", "patterns/"):
        name = name.removeprefix(prefix)
    name = name.removesuffix(".md")
    try:
        return normalize_name(name)
    except ProposalError:
        raise ProposalError(f"page name {raw[:80]!r} has no letters or digits") from None


def page_path(slug: str) -> str:
    return f"{PATTERNS}/{slug}.md"


class Evidence(BaseModel):
    """One trajectory that shows the pattern: its task id and the round it was sampled in."""

    model_config = ConfigDict(frozen=True)
    task: str
    round: int = Field(ge=0)


class PageMeta(BaseModel):
    """A page's front matter. Keys a backend adds (the offline maintainer's `rule`) are kept."""

    model_config = ConfigDict(extra="allow")
    slug: str
    title: str
    kind: PageKind = PageKind.FAILURE
    status: PageStatus = PageStatus.ACTIVE
    summary: str = ""
    evidence: list[Evidence] = []
    first_seen: int = 0
    last_seen: int = 0
    skills: list[str] = []
    merged_into: str | None = None
    retired_in: int | None = None

    def tasks(self) -> list[str]:
        return sorted({item.task for item in self.evidence})


class Page(BaseModel):
    meta: PageMeta
    sections: dict[Section, str] = {}
    extra: str = ""
    """Text under headings that are not one of the four sections, kept after them."""

    @property
    def slug(self) -> str:
        return self.meta.slug

    @property
    def active(self) -> bool:
        return self.meta.status == PageStatus.ACTIVE

    def missing_sections(self) -> list[Section]:
        return [section for section in Section if not self.sections.get(section, "").strip()]

    def body(self) -> str:
        """The sections as Markdown (what edits apply to), without front matter or derived lines."""
        parts = [
            f"## {section.value}\n\n{self.sections[section].strip()}"
            for section in Section
            if self.sections.get(section, "").strip()
        ]
        if self.extra.strip():
            parts.append(self.extra.strip())
        return "\n\n".join(parts)

    def with_evidence(self, items: list[Evidence]) -> Page:
        evidence = sorted(set(self.meta.evidence) | set(items), key=lambda e: (e.round, e.task))
        rounds = [e.round for e in evidence] or [0]
        meta = self.meta.model_copy(update={"evidence": evidence, "first_seen": min(rounds), "last_seen": max(rounds)})
        return self.model_copy(update={"meta": meta})

    def render(self) -> str:
        meta = self.meta.model_dump(mode="json", exclude_none=True)
        front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000, default_flow_style=None).strip()
        return f"---\n{front}\n---\n\n# {self.meta.title}\n\n{derived_line(self.meta)}\n\n{self.body()}\n"

    def text_for_search(self) -> str:
        return f"{self.meta.title}\n{self.meta.summary}\n{self.body()}"


def derived_line(meta: PageMeta) -> str:
    """The one line of a page computed from its front matter, never edited by hand."""
    if meta.status == PageStatus.MERGED and meta.merged_into:
        return f"_Merged into [{meta.merged_into}]({meta.merged_into}.md)._"
    if meta.status == PageStatus.RETIRED:
        return f"_Retired in round {meta.retired_in}: no new evidence since round {meta.last_seen}._"
    tasks = meta.tasks()
    rounds = (
        f"round {meta.first_seen}"
        if meta.first_seen == meta.last_seen
        else f"rounds {meta.first_seen}-{meta.last_seen}"
    )
    return f"_Seen in {len(tasks)} episode(s), {rounds}: {', '.join(tasks) or 'none'}._"


def parse_body(body: str) -> tuple[str, dict[Section, str], str]:
    """(title, sections, extra text) of a Markdown body; text before the first `##` heading that
    is not the title or a derived line counts as the Description."""
    title, extra = "", []
    sections: dict[Section, str] = {}
    matches = list(_HEADING.finditer(body))
    preamble = body[: matches[0].start()] if matches else body
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(body)
        text = body[match.end() : end].strip()
        heading = match.group(2).strip().strip("*:").strip()
        if len(match.group(1)) == 1 and not title:
            title, preamble = heading, preamble + "\n" + text
            continue
        section = _section(heading)
        if section is None:
            extra.append(f"{match.group(1)} {heading}\n\n{text}".strip())
        elif section in sections:
            sections[section] = f"{sections[section]}\n\n{text}".strip()
        else:
            sections[section] = text
    lead = "\n".join(line for line in preamble.strip().splitlines() if not _DERIVED.match(line.strip())).strip()
    if lead:
        sections[Section.DESCRIPTION] = f"{lead}\n\n{sections.get(Section.DESCRIPTION, '')}".strip()
    return title, sections, "\n\n".join(extra)


def _section(heading: str) -> Section | None:
    lowered = heading.lower()
    for alias, section in SECTION_ALIASES.items():
        if lowered.startswith(alias):
            return section
    return None


def parse_page(slug: str, text: str) -> Page:
    """A page from its file; front matter that is missing or unusable falls back to defaults
    (an old or hand-written page still reads, and is rewritten in the model's form)."""
    try:
        data, body = split_front_matter(text)
    except (ValueError, RecursionError):
        data, body = {}, text
    title, sections, extra = parse_body(body)
    data = {
        key: value
        for key, value in data.items()  # extra keys are kept as strings only
        if key in PageMeta.model_fields or (isinstance(key, str) and isinstance(value, str))
    }
    data = {**data, "slug": slug, "title": str(data.get("title") or title or slug)}
    evidence = data.get("evidence")
    data["evidence"] = [_evidence(item) for item in evidence if _evidence(item)] if isinstance(evidence, list) else []
    try:
        meta = PageMeta.model_validate(data)
    except ValidationError as exc:  # drop the fields that do not fit, keep the rest
        bad = {error["loc"][0] for error in exc.errors() if error["loc"]}
        meta = PageMeta.model_validate(
            {key: value for key, value in data.items() if key not in bad or key in ("slug", "title")}
        )
    return Page(meta=meta, sections=sections, extra=extra).with_evidence([])


def _evidence(item: object) -> dict[str, object] | None:
    """An evidence entry from `{task, round}` or a bare task id (pages written before the model)."""
    if isinstance(item, dict) and isinstance(item.get("task"), (str, int)):
        round_number = item.get("round")
        valid_round = isinstance(round_number, int) and round_number >= 0
        return {"task": str(item["task"]), "round": round_number if valid_round else 0}
    if isinstance(item, (str, int)) and not isinstance(item, bool):
        return {"task": str(item), "round": 0}
    return None


def read_pages(files: dict[str, str]) -> dict[str, Page]:
    """Pages from `{path under wiki/: text}`, keyed by slug."""
    pages = {}
    for path, text in sorted(files.items()):
        if path.startswith("patterns/") and path.endswith(".md") and path.count("/") == 1:
            slug = path[len("patterns/") : -len(".md")]
            pages[slug] = parse_page(slug, text)
    return pages
