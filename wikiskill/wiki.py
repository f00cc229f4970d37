"""The wiki layer: pattern pages, index, log and skill-impact history.

Functions here compute new file contents; the harness commits them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

from .edits import apply_edits, parse_edits
from .errors import ProposalError
from .roles.maintainer import MaintainerOutput, WikiView
from .skills import normalize_name, split_front_matter

INDEX = "wiki/index.md"
LOG = "wiki/log.md"
IMPACT = "wiki/skill-impact.md"
PATTERNS = "wiki/patterns"
MAX_PAGE_CHARS = 20_000
MAX_INDEX_CHARS = 100_000
INDEX_LINE = re.compile(r"^\s*-\s*\[([^\]]+)\]\(patterns/([^)]+)\.md\)\s*:\s*(.+)$")


def read_wiki(files: dict[str, str]) -> WikiView:
    """The wiki from `{path under wiki/: text}`."""
    pages = {
        path[len("patterns/"):-len(".md")]: text
        for path, text in sorted(files.items())
        if path.startswith("patterns/") and path.endswith(".md") and path.count("/") == 1
    }
    return WikiView(index=files.get("index.md", ""), log=files.get("log.md", ""), pages=pages)


def page_path(slug: str) -> str:
    return f"{PATTERNS}/{slug}.md"


def _with_page_front_matter(content: str, round_number: int, evidence: list[str], created: object = None) -> str:
    try:
        data, body = split_front_matter(content)
    except ValueError:
        data, body = {}, content
    data.setdefault("kind", "pattern")
    data["created"] = created or data.get("created") or f"r{round_number:03d}"
    data["updated"] = f"r{round_number:03d}"
    cited = sorted(set(data.get("evidence") or []) | set(evidence)) if isinstance(data.get("evidence", []), list) else evidence
    data["evidence"] = cited
    front = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000).strip()
    return f"---\n{front}\n---\n\n{body.strip()}\n"


def _cited(text: str, task_ids: list[str]) -> list[str]:
    return [task_id for task_id in task_ids if task_id in text]


@dataclass
class WikiUpdate:
    changes: dict[str, str | None]
    report: list[str]


def apply_maintainer_output(
    output: MaintainerOutput, wiki: WikiView, round_number: int, task_ids: list[str]
) -> WikiUpdate:
    """New page, index and log texts; anything that cannot apply is skipped and reported."""
    changes: dict[str, str | None] = {}
    report: list[str] = []
    pages = dict(wiki.pages)
    for page in output.create_patterns:
        try:
            slug = normalize_name(page.name)
        except ProposalError as exc:
            report.append(f"create skipped: {exc}")
            continue
        if slug in pages:
            report.append(f"create {slug} skipped: the page exists (use update_patterns)")
            continue
        if len(page.content) > MAX_PAGE_CHARS or not page.content.strip():
            report.append(f"create {slug} skipped: content must be 1-{MAX_PAGE_CHARS} characters")
            continue
        pages[slug] = changes[page_path(slug)] = _with_page_front_matter(
            page.content, round_number, _cited(page.content, task_ids))
        report.append(f"created {slug}")
    for page in output.update_patterns:
        slug = page.name.removesuffix(".md").rsplit("/", 1)[-1]
        if slug not in pages:
            report.append(f"update {page.name[:60]!r} skipped: no such page")
            continue
        edits, problems = parse_edits(page.edits)
        text, skipped = apply_edits(pages[slug], edits)
        report += [f"update {slug}: {p}" for p in problems + skipped]
        if text == pages[slug]:
            continue
        if len(text) > MAX_PAGE_CHARS:
            report.append(f"update {slug} skipped: the page would exceed {MAX_PAGE_CHARS} characters")
            continue
        created = _created(pages[slug])
        pages[slug] = changes[page_path(slug)] = _with_page_front_matter(
            text, round_number, _cited(text, task_ids), created)
        report.append(f"updated {slug}")
    index = output.update_index.strip()
    if index and len(index) <= MAX_INDEX_CHARS:
        changes[INDEX] = index + "\n"
        dangling = [m.group(2) for m in map(INDEX_LINE.match, index.splitlines()) if m and m.group(2) not in pages]
        if dangling:
            report.append(f"index links to missing pages: {', '.join(dangling[:10])}")
    else:
        report.append("index update skipped: empty or too long")
    log_entry = output.append_log.strip()[:MAX_PAGE_CHARS] or "(no summary given)"
    changes[LOG] = append_section(wiki.log, f"## Round {round_number}", log_entry)
    return WikiUpdate(changes, report)


def _created(text: str) -> object:
    try:
        return split_front_matter(text)[0].get("created")
    except ValueError:
        return None


def append_section(document: str, heading: str, body: str) -> str:
    return f"{document.rstrip()}\n\n{heading}\n\n{body.strip()}\n"


def index_entries(index: str) -> list[tuple[str, str, str]]:
    """(title, slug, description) of every well-formed index line."""
    return [m.groups() for m in map(INDEX_LINE.match, index.splitlines()) if m]
