"""The page model, the generated index, the maintainer's bounded view and consolidation."""

import pytest

from wikiskill.core.config import WikiSettings
from wikiskill.knowledge.consolidation import WordOverlap, consolidate
from wikiskill.core.errors import ProposalError
from wikiskill.knowledge.links import rewrite_links
from wikiskill.knowledge.lint import lint_files
from wikiskill.roles.offline.consolidation import PatternCover
from wikiskill.knowledge.pages import Evidence, Page, PageMeta, PageStatus, Section, page_slug, parse_page
from wikiskill.knowledge.wiki import Wiki, maintainer_view, read_wiki, render_index, render_page


def make_page(slug: str, summary: str, tasks: dict[str, int], fix: str = "Spell the word.", **meta) -> Page:
    sections = {Section.DESCRIPTION: f"About {slug}.", Section.ROOT_CAUSE: "Reads the word whole.",
                Section.EVIDENCE: "\n".join(f"- {task}: wrong" for task in tasks), Section.FIX: fix}
    page = Page(meta=PageMeta(slug=slug, title=slug.replace("-", " "), summary=summary, **meta), sections=sections)
    return page.with_evidence([Evidence(task=task, round=number) for task, number in tasks.items()])


def as_files(pages: dict[str, Page]) -> dict[str, str]:
    files = {f"patterns/{slug}.md": render_page(page, pages) for slug, page in pages.items()}
    return {**files, "index.md": render_index(pages), "log.md": "# Log\n"}


@pytest.mark.parametrize("raw", ["encoding-rule-missing", "encoding-rule-missing.md", "patterns/encoding-rule-missing.md",
                                 "wiki/patterns/Encoding Rule Missing.md", " Encoding_Rule_Missing ",
                                 "./patterns/ENCODING-RULE-MISSING.md"])
def test_every_spelling_of_a_page_name_normalises_to_one_slug(raw):
    assert page_slug(raw) == "encoding-rule-missing"


def test_a_name_with_nothing_left_is_refused():
    with pytest.raises(ProposalError, match="has no letters or digits"):
        page_slug("patterns/.md")


def test_counts_are_derived_from_the_front_matter_never_kept_as_prose():
    page = make_page("slips", "s", {"t1": 1, "t2": 3, "t3": 3})
    stale = page.render().replace("_Seen in 3 episode(s), rounds 1-3", "_Seen in 1 episode(s), round 1")
    reread = parse_page("slips", stale)
    assert reread.meta.first_seen == 1 and reread.meta.last_seen == 3
    assert "_Seen in 3 episode(s), rounds 1-3: t1, t2, t3._" in reread.render()
    assert reread.render().count("Seen in") == 1
    assert parse_page("slips", reread.render()) == reread


def test_a_page_from_before_the_model_still_reads_and_reports_its_missing_sections():
    page = parse_page("old", "---\nkind: pattern\nevidence: [t1, t2]\n---\n# Old\n\nreversed word only\n")
    assert page.meta.tasks() == ["t1", "t2"] and page.meta.title == "Old"
    assert page.sections[Section.DESCRIPTION] == "reversed word only"
    assert page.missing_sections() == [Section.ROOT_CAUSE, Section.EVIDENCE, Section.FIX]


def test_links_in_code_are_left_alone_and_others_follow_the_resolver():
    text = "See [a](a.md), `[b](b.md)`, [web](https://x.org/y.md) and\n```\n[c](c.md)\n```\n[d]: d.md\n"
    out = rewrite_links(text, lambda target: None if target == "d.md" else target.upper())
    assert out == "See [a](A.MD), `[b](b.md)`, [web](https://x.org/y.md) and\n```\n[c](c.md)\n```\n"


def test_the_index_lists_active_pages_with_their_counts_and_the_rest_apart():
    pages = {"a": make_page("a", "problem + cause + fix", {"t1": 2}),
             "b": make_page("b", "b", {"t2": 1}, status=PageStatus.RETIRED, retired_in=9)}
    index = render_index(pages)
    assert "- [a](patterns/a.md): problem + cause + fix (1 episode(s), rounds 2-2)" in index
    assert index.index("## Merged and retired pages") < index.index("- [b](patterns/b.md): retired in round 9")
    assert lint_files({f"wiki/{path}": text for path, text in as_files(pages).items()}) == []


@pytest.mark.parametrize("count", [0, 10, 300])
def test_the_maintainer_view_stays_within_its_budget_however_large_the_wiki(count):
    pages = {f"page-{i}": make_page(f"page-{i}", f"summary of pattern {i} about words", {f"t{i}": i})
             for i in range(count)}
    pages["reversal"] = make_page("reversal", "reversal of giraffe fails", {"t-giraffe": 1})
    view = maintainer_view(Wiki(pages, "# Log\n\n## Round 1\n\nsomething"), "reverse the word giraffe", 800)
    assert view.tokens() <= 800
    assert "reversal" in view.pages


def test_consolidation_merges_duplicates_rewrites_links_and_retires_stale_pages():
    pages = {
        "slips": make_page("slips", "reversal slips + read whole + spell it", {"t1": 6, "t2": 7}),
        "reversal-slip": make_page("reversal-slip", "reversal slips + read whole + spell it", {"t3": 8}),
        "old": make_page("old", "counting off by one", {"t4": 1}, fix="Count twice."),
        "fresh": make_page("fresh", "see [the slip](reversal-slip.md)", {"t5": 9}, fix="Use a list."),
    }
    files = as_files(pages)
    skills = {"spell/PURPOSE.md": "## Patterns Addressed\n- [r](../../wiki/patterns/reversal-slip.md#fix)\n"}
    result = consolidate(files, skills, 10, WikiSettings(retire_after=5), WordOverlap(0.6))
    assert result.merged == [("reversal-slip", "slips")] and result.retired == ["old"]
    after = read_wiki({**files, **{p.removeprefix("wiki/"): t for p, t in result.changes.items() if p.startswith("wiki/")}})
    kept, gone = after.pages["slips"], after.pages["reversal-slip"]
    assert kept.meta.tasks() == ["t1", "t2", "t3"] and "- t3: wrong" in kept.sections[Section.EVIDENCE]
    assert gone.meta.status == PageStatus.MERGED and gone.meta.merged_into == "slips"
    assert "_Merged into [slips](slips.md)._" in result.changes["wiki/patterns/reversal-slip.md"]
    assert "[the slip](slips.md)" in result.changes["wiki/patterns/fresh.md"]
    assert result.changes["skills/spell/PURPOSE.md"] == \
        "## Patterns Addressed\n- [r](../../wiki/patterns/slips.md#fix)\n"
    assert after.pages["old"].meta.status == PageStatus.RETIRED
    tree = {f"wiki/{path}": text for path, text in files.items()} | {
        path: text for path, text in result.changes.items() if path.startswith("wiki/")}
    assert lint_files(tree) == []
    again = consolidate({p.removeprefix("wiki/"): t for p, t in tree.items()}, {}, 10, WikiSettings(retire_after=5),
                        WordOverlap(0.6))
    assert (again.merged, again.retired, again.changes) == ([], [], {})


def test_offline_pages_merge_when_one_mined_pattern_covers_another():
    broad = make_page("avoid-eat-x", "a", {"t1": 1}, rule="avoid", pattern="eat *")
    narrow = make_page("avoid-eat-apple", "b", {"t2": 1}, rule="avoid", pattern="eat apple")
    other = make_page("prefer-eat-apple", "c", {"t3": 1}, rule="prefer", pattern="eat apple")
    rule = PatternCover()
    assert rule.keeper(narrow, broad) is broad and rule.keeper(broad, narrow) is broad
    assert rule.keeper(narrow, other) is None and rule.keeper(broad, broad) is None
