"""The wiki layer: pattern pages, index, log and skill-impact history.

Functions here compute new file contents; the harness commits them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

from .edits import apply_edits, parse_edits
from .errors import ProposalError
from .redact import scrub
from .roles.maintainer import MaintainerOutput, PageCreate, PageUpdate, WikiView
from .skills import normalize_name, split_front_matter

INDEX = "wiki/index.md"
LOG = "wiki/log.md"
IMPACT = "wiki/skill-impact.md"
PATTERNS = "wiki/patterns"
MAX_PAGE_CHARS = 20_000
MAX_INDEX_CHARS = 100_000
MAX_PAGES_PER_ROUND = 30
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


def _split(text: str) -> tuple[dict, str]:
    """A page's front matter and body; no front matter when none parses."""
    try:
        return split_front_matter(text)
    except (ValueError, RecursionError):  # PyYAML recurses once per nesting level
        return {}, text


def _with_page_front_matter(content: str, round_number: int, evidence: list[str], created: object = None) -> str:
    data, body = _split(content)
    data.setdefault("kind", "pattern")
    data["created"] = created or data.get("created") or f"r{round_number:03d}"
    data["updated"] = f"r{round_number:03d}"
    earlier = data.get("evidence") if isinstance(data.get("evidence"), list) else []
    data["evidence"] = sorted({str(task_id) for task_id in earlier if isinstance(task_id, (str, int))} | set(evidence))
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
    update = WikiUpdate({}, [])
    pages = dict(wiki.pages)
    requests = [*output.create_patterns, *output.update_patterns]
    for page in requests[MAX_PAGES_PER_ROUND:]:
        update.report.append(f"{page.name[:60]!r} skipped: at most {MAX_PAGES_PER_ROUND} page edits per round")
    for page in requests[:MAX_PAGES_PER_ROUND]:
        if isinstance(page, PageCreate):
            _create_page(page, pages, update, round_number, task_ids)
        else:
            _update_page(page, pages, update, round_number, task_ids)
    index = output.update_index.strip()
    if index and len(index) <= MAX_INDEX_CHARS:
        update.changes[INDEX] = index + "\n"
        dangling = [m.group(2) for m in map(INDEX_LINE.match, index.splitlines()) if m and m.group(2) not in pages]
        if dangling:
            update.report.append(f"index links to missing pages: {', '.join(dangling[:10])}")
    else:
        update.report.append("index update skipped: empty or too long")
    log_entry = output.append_log.strip()[:MAX_PAGE_CHARS] or "(no summary given)"
    update.changes[LOG] = append_section(wiki.log, f"## Round {round_number}", log_entry)
    return update


def _create_page(page: PageCreate, pages: dict[str, str], update: WikiUpdate, round_number: int,
                 task_ids: list[str]) -> None:
    try:
        slug = normalize_name(page.name)
    except ProposalError as exc:
        update.report.append(f"create skipped: {exc}")
        return
    if scrub(slug) != slug:
        update.report.append("create skipped: the page name contains a secret")
    elif slug in pages:
        update.report.append(f"create {slug} skipped: the page exists (use update_patterns)")
    elif len(page.content) > MAX_PAGE_CHARS or not page.content.strip():
        update.report.append(f"create {slug} skipped: content must be 1-{MAX_PAGE_CHARS} characters")
    else:
        pages[slug] = update.changes[page_path(slug)] = _with_page_front_matter(
            page.content, round_number, _cited(page.content, task_ids))
        renamed = f" (asked for {page.name[:60]!r})" if page.name != slug else ""
        update.report.append(f"created {slug}{renamed}")


def _update_page(page: PageUpdate, pages: dict[str, str], update: WikiUpdate, round_number: int,
                 task_ids: list[str]) -> None:
    slug = page.name.removesuffix(".md").rsplit("/", 1)[-1]
    if slug not in pages:
        update.report.append(f"update {page.name[:60]!r} skipped: no such page")
        return
    edits, problems = parse_edits(page.edits)
    text, skipped = apply_edits(pages[slug], edits)
    update.report += [f"update {slug}: {p}" for p in problems + skipped]
    if text == pages[slug]:
        update.report.append(f"update {slug} skipped: no edit changed the page")
    elif len(text) > MAX_PAGE_CHARS:
        update.report.append(f"update {slug} skipped: the page would exceed {MAX_PAGE_CHARS} characters")
    else:
        created = _created(pages[slug])
        pages[slug] = update.changes[page_path(slug)] = _with_page_front_matter(
            text, round_number, _cited(text, task_ids), created)
        update.report.append(f"updated {slug}")


def _created(text: str) -> object:
    return _split(text)[0].get("created")


def append_section(document: str, heading: str, body: str) -> str:
    return f"{document.rstrip()}\n\n{heading}\n\n{body.strip()}\n"


def index_entries(index: str) -> list[tuple[str, str, str]]:
    """(title, slug, description) of every well-formed index line."""
    return [m.groups() for m in map(INDEX_LINE.match, index.splitlines()) if m]
