"""The wiki layer: applying the maintainer's output to pattern pages, and the generated index.

Functions here compute new file contents; the harness commits them. Pages follow the page model
(wikiskill/knowledge/pages.py); `wiki/index.md` is generated from the pages' front matter, so it always
lists every page and links nothing that is missing.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from ..core.errors import ProposalError
from ..core.redact import scrub
from .codetext import code_only
from .edits import Edit, apply_edits, parse_edits
from .links import Resolver, rewrite_links
from .pages import PATTERNS, Evidence, Page, PageMeta, PageStatus, Section, page_path, page_slug, parse_body, read_pages
from .search import rank, tokens
from .skills import split_front_matter
from .wiki_requests import MaintainerOutput, PageCreate, PageUpdate, WikiView

INDEX = "wiki/index.md"
LOG = "wiki/log.md"
IMPACT = "wiki/skill-impact.md"
MAX_PAGE_CHARS = 20_000
MAX_SUMMARY_CHARS = 400
MAX_PAGES_PER_ROUND = 30
INDEX_LINE = re.compile(r"^\s*-\s*\[([^\]]+)\]\(patterns/([^)]+)\.md\)\s*:\s*(.+)$")
INDEX_HEADER = "# Wiki index\n\nOne line per active pattern page, written by wikiskill from the pages' front matter."
INACTIVE_HEADER = "## Merged and retired pages"
LOG_SECTIONS_SHOWN = 2
CODE_LOG = (
    "the log section is code copied from a trace, not prose about the round: say in a few sentences "
    "what this round's traces showed and which pages you wrote or changed (code only in backticks)"
)

__all__ = [
    "INDEX",
    "LOG",
    "IMPACT",
    "PATTERNS",
    "Wiki",
    "WikiUpdate",
    "Derivation",
    "read_wiki",
    "render_index",
    "apply_maintainer_output",
    "maintainer_view",
    "index_entries",
    "append_section",
    "page_path",
]


@dataclass
class Wiki:
    """The committed wiki: its pages by slug and its log."""

    pages: dict[str, Page]
    log: str = ""


def read_wiki(files: dict[str, str]) -> Wiki:
    """The wiki from `{path under wiki/: text}`."""
    return Wiki(read_pages(files), files.get("log.md", ""))


@dataclass
class Derivation:
    """What the harness derived for a written page from the page itself, because the maintainer
    left it out."""

    summary: str = ""
    """The Description's first sentence, when the page was given no summary."""
    evidence: list[str] = field(default_factory=list)
    """Shown task ids the page cites that its `evidence` list did not name."""

    def __bool__(self) -> bool:
        return bool(self.summary or self.evidence)

    def describe(self) -> str:
        parts = []
        if self.summary:
            parts.append(f"summary from the Description's first sentence ({self.summary})")
        if self.evidence:
            parts.append(f"evidence from the shown task ids the page cites ({', '.join(self.evidence)})")
        return "; ".join(parts)


@dataclass
class WikiUpdate:
    changes: dict[str, str | None]
    report: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    derived: dict[str, Derivation] = field(default_factory=dict)
    """What was derived for each written page (pages with nothing derived are not listed)."""

    def derived_lines(self) -> list[str]:
        return [f"{slug}: {derivation.describe()}" for slug, derivation in self.derived.items()]


def resolve(pages: dict[str, Page], slug: str) -> str:
    """The page a slug stands for now: a merged page's target (followed to the end)."""
    seen = set()
    while slug in pages and slug not in seen:
        target = pages[slug].meta.merged_into
        if pages[slug].meta.status != PageStatus.MERGED or not target:
            break
        seen.add(slug)
        slug = target
    return slug


def page_link_resolver(pages: dict[str, Page]) -> Resolver:
    """For links written in a page: a link to a known page is rewritten to its canonical target
    (`slug.md`, following merges), links to the index, log and skill-impact are kept, anything
    else is dropped (its text stays)."""
    kept = {f"../{name}" for name in ("index.md", "log.md", "skill-impact.md")}

    def resolver(target: str) -> str | None:
        local = target.split("#", 1)[0]
        if local in kept:
            return target
        if not (local.endswith(".md") or "/" not in local):
            return None
        try:
            slug = resolve(pages, page_slug(local.rsplit("/", 1)[-1]))
        except ProposalError:
            return None
        return f"{slug}.md" if slug in pages else None

    return resolver


def _clean_line(text: str) -> str:
    line = " ".join(rewrite_links(text, lambda target: None).split())
    return line[:MAX_SUMMARY_CHARS] or "(no summary)"


def render_index(pages: dict[str, Page]) -> str:
    """wiki/index.md: one line per active page, then the merged and retired ones."""

    def title(page: Page) -> str:
        return " ".join(page.meta.title.replace("[", "(").replace("]", ")").split()) or page.slug

    lines = [INDEX_HEADER, ""]
    for slug, page in sorted(pages.items()):
        if page.active:
            seen = f"{len(page.meta.tasks())} episode(s), rounds {page.meta.first_seen}-{page.meta.last_seen}"
            lines.append(f"- [{title(page)}](patterns/{slug}.md): {_clean_line(page.meta.summary)} ({seen})")
    inactive = [(slug, page) for slug, page in sorted(pages.items()) if not page.active]
    if inactive:
        lines += ["", INACTIVE_HEADER, ""]
        for slug, page in inactive:
            why = (
                f"merged into {page.meta.merged_into}"
                if page.meta.status == PageStatus.MERGED
                else f"retired in round {page.meta.retired_in}"
            )
            lines.append(f"- [{title(page)}](patterns/{slug}.md): {why}")
    return "\n".join(lines) + "\n"


def render_page(page: Page, pages: dict[str, Page]) -> str:
    """A page's file text, its links rewritten to pages that exist."""
    return rewrite_links(page.render(), page_link_resolver(pages))


def index_entries(index: str) -> list[tuple[str, str, str]]:
    """(title, slug, description) of every well-formed index line."""
    return [(m.group(1), m.group(2), m.group(3)) for m in map(INDEX_LINE.match, index.splitlines()) if m]


def append_section(document: str, heading: str, body: str) -> str:
    return f"{document.rstrip()}\n\n{heading}\n\n{body.strip()}\n"


# -- what the maintainer sees ---------------------------------------------------------------------


def maintainer_view(wiki: Wiki, query: str, token_budget: int) -> WikiView:
    """The latest log sections, the pages most relevant to `query` (the sampled traces) in full
    (up to half the budget), then index lines of the next most relevant pages, all within
    `token_budget`: the view stays the same size however large the wiki grows."""
    active = {slug: page for slug, page in wiki.pages.items() if page.active}
    slugs = list(active)
    ranked = [slugs[index] for index, _ in rank([active[s].text_for_search() for s in slugs], query)]
    log = "\n## ".join(wiki.log.split("\n## ")[-LOG_SECTIONS_SHOWN:])[-token_budget:]
    left = token_budget - tokens(log)
    pages: dict[str, str] = {}
    for slug in ranked:
        text = render_page(active[slug], wiki.pages)
        if tokens(text) > left // 2:
            continue
        pages[slug] = text
        left -= tokens(text) + 1
    lines = dict(_index_lines(active))
    listed = []
    for slug in ranked:
        if slug not in pages:
            if tokens(lines[slug]) + 1 > left:
                break
            listed.append(slug)
            left -= tokens(lines[slug]) + 1
    hidden = len(active) - len(pages) - len(listed)
    index = "\n".join(
        [lines[slug] for slug in sorted(listed)] + ([f"({hidden} less relevant page(s) not shown)"] if hidden else [])
    )
    return WikiView(index=index or "(no other pages)", log=log, pages=pages)


def _index_lines(active: dict[str, Page]) -> list[tuple[str, str]]:
    return [
        (slug, f"- [{page.meta.title}](patterns/{slug}.md): {_clean_line(page.meta.summary)}")
        for slug, page in active.items()
    ]


# -- applying the maintainer's output ---------------------------------------------------------------


@dataclass
class _Context:
    round: int
    shown: set[str]
    known: set[str]


@dataclass
class _Written:
    page: Page
    note: str
    derived: Derivation = field(default_factory=Derivation)


def cited(text: str, task_ids: set[str]) -> set[str]:
    """The task ids among `task_ids` that `text` names (as whole ids: `t1` is not in `t10`)."""
    return {task_id for task_id in task_ids if re.search(rf"(?<![\w-]){re.escape(task_id)}(?![\w-])", text)}


def _evidence(explicit: list[str], text: str, before: set[str], ctx: _Context) -> tuple[set[str], list[str]]:
    """The shown task ids a page cites, and the reasons to refuse it."""
    named = {str(task_id) for task_id in explicit} | (cited(text, ctx.known | ctx.shown) - before)
    unseen = sorted(named - ctx.shown)
    problems = [f"cites task ids it was not shown: {', '.join(unseen[:8])}"] if unseen else []
    return named & ctx.shown, problems


def _section_problems(page: Page) -> list[str]:
    missing = page.missing_sections()
    return [f"missing section(s): {', '.join(f'## {s.value}' for s in missing)}"] if missing else []


def apply_maintainer_output(
    output: MaintainerOutput, wiki: Wiki, round_number: int, shown: list[str], known: Collection[str] = ()
) -> WikiUpdate:
    """New page, index and log texts. `shown` are the task ids of the traces the maintainer saw,
    `known` every task id of the round (a page naming one it was not shown is refused).
    Refused pages are not written; the reasons are in `refused`."""
    ctx = _Context(round_number, set(shown), set(known))
    update = WikiUpdate({})
    pages = dict(wiki.pages)
    requests: list[PageCreate | PageUpdate] = [*output.create_patterns, *output.update_patterns]
    for request in requests[MAX_PAGES_PER_ROUND:]:
        update.refused.append(f"{_shown_name(request.name)}: at most {MAX_PAGES_PER_ROUND} page edits per round")
    for request in requests[:MAX_PAGES_PER_ROUND]:
        verb = "create" if isinstance(request, PageCreate) else "update"
        try:
            slug = page_slug(request.name)
            if scrub(slug) != slug:
                raise ProposalError("the page name contains a secret")
            if isinstance(request, PageCreate):
                written = _create(request, slug, pages, ctx)
            else:
                written = _update(request, slug, pages, ctx)
        except ProposalError as exc:
            update.refused.append(f"{verb} {_shown_name(request.name)}: {exc}")
            continue
        page = written.page
        pages[page.slug] = page
        renamed = f" (asked for {_shown_name(request.name)})" if request.name != page.slug else ""
        update.report.append(f"{written.note} {page.slug}{renamed}")
        derived = _merged(update.derived.pop(page.slug, Derivation()), written.derived, page)
        if derived:
            update.derived[page.slug] = derived
    for slug, page in pages.items():
        if page != wiki.pages.get(slug):
            update.changes[page_path(slug)] = render_page(page, pages)
    update.changes[INDEX] = render_index(pages)
    log_entry = output.append_log.strip()[:MAX_PAGE_CHARS] or "(no summary given)"
    if code_only(log_entry):
        update.refused.append(f"append_log: {CODE_LOG}")
        log_entry = "(the maintainer's log section was refused: it was code, not prose about the round)"
    update.changes[LOG] = append_section(wiki.log, f"## Round {round_number}", log_entry)
    return update


def _shown_name(name: str) -> str:
    """A requested name for a report line: cut short, and never carrying a secret."""
    return repr(name[:60]) if scrub(name) == name else "'[REDACTED]'"


def check_output(
    output: MaintainerOutput, wiki: Wiki, round_number: int, shown: list[str], known: Collection[str] = ()
) -> list[str]:
    """The reasons pages of `output` would be refused (what the maintainer's retry is told)."""
    return apply_maintainer_output(output, wiki, round_number, shown, known).refused


def _summary(text: str | None) -> str:
    return " ".join((text or "").split())[:MAX_SUMMARY_CHARS]


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def first_sentence(markdown: str) -> str:
    """The first sentence of a section's first paragraph, as one line of plain text (links kept
    as their text, a leading list or quote marker dropped): a summary for a page given none."""
    paragraph = re.split(r"\n\s*\n", markdown.strip(), maxsplit=1)[0]
    line = " ".join(rewrite_links(paragraph, lambda target: None).split()).lstrip("-*+> ")
    return _summary(_SENTENCE_END.split(line, maxsplit=1)[0])


def _with_summary(page: Page, given: str) -> tuple[Page, str]:
    """The page with `given` as its summary or, when that is empty and the page has none, the
    Description's first sentence (returned too: empty unless derived)."""
    summary = _summary(given) or page.meta.summary
    derived = "" if summary else first_sentence(page.sections.get(Section.DESCRIPTION, ""))
    meta = page.meta.model_copy(update={"summary": summary or derived})
    return page.model_copy(update={"meta": meta}), derived


def _cited_only(evidence: set[str], explicit: list[str]) -> list[str]:
    return sorted(evidence - {str(task) for task in explicit})


def _merged(earlier: Derivation, later: Derivation, page: Page) -> Derivation:
    """What stands derived for a page after a second request in one reply: a summary derived
    earlier only while the page still has it."""
    summary = later.summary or (earlier.summary if earlier.summary == page.meta.summary else "")
    return Derivation(summary, sorted({*earlier.evidence, *later.evidence}))


def _create(request: PageCreate, slug: str, pages: dict[str, Page], ctx: _Context) -> _Written:
    """A new page. A summary or evidence list left out is derived from the page (and reported);
    what cannot be derived - a section, a cited task id that was shown - refuses it."""
    if slug in pages:
        return _evidence_for_existing(request, resolve(pages, slug), pages, ctx)
    if not request.content.strip() or len(request.content) > MAX_PAGE_CHARS:
        raise ProposalError(f"content must be 1-{MAX_PAGE_CHARS} characters")
    title, sections, extra = parse_body(_without_front_matter(request.content))
    meta = PageMeta(
        slug=slug,
        title=" ".join((request.title or title or slug).split())[:200],
        kind=request.kind,
        skills=sorted(set(request.skills)),
        **_kept_keys(request.content),
    )
    page, derived = _with_summary(Page(meta=meta, sections=sections, extra=extra), request.summary)
    evidence, problems = _evidence(request.evidence, request.content, set(), ctx)
    problems = _section_problems(page) + problems
    if not page.meta.summary and not problems:
        problems.append("no summary, and no sentence in its Description to derive one from")
    if not evidence and not problems:
        problems.append("cites no task id of the traces shown")
    if problems:
        raise ProposalError("; ".join(problems))
    page = page.with_evidence([Evidence(task=task, round=ctx.round) for task in sorted(evidence)])
    return _Written(page, "created", Derivation(derived, _cited_only(evidence, request.evidence)))


def _evidence_for_existing(request: PageCreate, slug: str, pages: dict[str, Page], ctx: _Context) -> _Written:
    """A create for a page that exists adds its evidence there (and revives a retired page)."""
    _, sections, _ = parse_body(_without_front_matter(request.content))
    update = PageUpdate(
        name=slug,
        evidence=request.evidence,
        add_evidence=sections.get(Section.EVIDENCE, ""),
        summary=request.summary or None,
        skills=request.skills,
    )
    written = _update(update, slug, pages, ctx)
    return _Written(written.page, "added evidence to existing page", written.derived)


def _update(request: PageUpdate, slug: str, pages: dict[str, Page], ctx: _Context) -> _Written:
    slug = resolve(pages, slug)
    if slug not in pages:
        raise ProposalError("no such page")
    old = pages[slug]
    edits, problems = parse_edits(request.edits, Edit)
    body, skipped = apply_edits(old.body(), edits)
    if problems or skipped:
        raise ProposalError("; ".join(problems + skipped))
    _, sections, extra = parse_body(body)
    current = sections.get(Section.EVIDENCE, "")
    added = [
        line for line in request.add_evidence.strip().splitlines() if line.strip() and line not in current.splitlines()
    ]
    if added:
        sections[Section.EVIDENCE] = "\n".join([current.rstrip(), *added]).strip()
    new_text = body + request.add_evidence
    evidence, problems = _evidence(request.evidence, new_text, cited(old.render(), ctx.known | ctx.shown), ctx)
    meta = old.meta.model_copy(
        update={
            "skills": sorted(set(old.meta.skills) | set(request.skills)),
            "status": PageStatus.ACTIVE,
            "retired_in": None,
        }
    )
    page, derived = _with_summary(Page(meta=meta, sections=sections, extra=extra), request.summary or "")
    page = page.with_evidence([Evidence(task=task, round=ctx.round) for task in sorted(evidence)])
    problems = _section_problems(page) + problems
    if len(page.render()) > MAX_PAGE_CHARS:
        problems.append(f"the page would exceed {MAX_PAGE_CHARS} characters")
    if problems:
        raise ProposalError("; ".join(problems))
    if page == old:
        return _Written(page, "nothing changed in")
    return _Written(
        page, "updated" if old.active else "revived", Derivation(derived, _cited_only(evidence, request.evidence))
    )


def _without_front_matter(content: str) -> str:
    try:
        return split_front_matter(content)[1]
    except (ValueError, RecursionError):
        return content


def _kept_keys(content: str) -> dict[str, str]:
    """String-valued front matter keys a backend put on a new page that the model does not own
    (the offline maintainer's `rule` and `pattern`)."""
    try:
        data = split_front_matter(content)[0]
    except (ValueError, RecursionError):
        return {}
    return {
        key: value
        for key, value in data.items()
        if isinstance(key, str) and isinstance(value, str) and key not in PageMeta.model_fields
    }
