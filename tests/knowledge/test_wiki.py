"""The page model, the generated index, the maintainer's bounded view and consolidation."""

import pytest

from wikiskill.core.errors import ProposalError
from wikiskill.knowledge.consolidation import WordOverlap, consolidate
from wikiskill.knowledge.links import rewrite_links
from wikiskill.knowledge.lint import lint_files
from wikiskill.knowledge.pages import Evidence, Page, PageMeta, PageStatus, Section, page_slug, parse_page
from wikiskill.knowledge.settings import WikiSettings
from wikiskill.knowledge.wiki import (
    INDEX,
    Derivation,
    Wiki,
    apply_maintainer_output,
    first_sentence,
    maintainer_view,
    read_wiki,
    render_index,
    render_page,
)
from wikiskill.knowledge.wiki_requests import MaintainerOutput, PageCreate, PageUpdate
from wikiskill.roles.offline.consolidation import PatternCover


def make_page(slug: str, summary: str, tasks: dict[str, int], fix: str = "Spell the word.", **meta) -> Page:
    sections = {
        Section.DESCRIPTION: f"About {slug}.",
        Section.ROOT_CAUSE: "Reads the word whole.",
        Section.EVIDENCE: "\n".join(f"- {task}: wrong" for task in tasks),
        Section.FIX: fix,
    }
    page = Page(meta=PageMeta(slug=slug, title=slug.replace("-", " "), summary=summary, **meta), sections=sections)
    return page.with_evidence([Evidence(task=task, round=number) for task, number in tasks.items()])


def as_files(pages: dict[str, Page]) -> dict[str, str]:
    files = {f"patterns/{slug}.md": render_page(page, pages) for slug, page in pages.items()}
    return {**files, "index.md": render_index(pages), "log.md": "# Log\n"}


@pytest.mark.parametrize(
    "raw",
    [
        "encoding-rule-missing",
        "encoding-rule-missing.md",
        "patterns/encoding-rule-missing.md",
        "wiki/patterns/Encoding Rule Missing.md",
        " Encoding_Rule_Missing ",
        "./patterns/ENCODING-RULE-MISSING.md",
    ],
)
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
    pages = {
        "a": make_page("a", "problem + cause + fix", {"t1": 2}),
        "b": make_page("b", "b", {"t2": 1}, status=PageStatus.RETIRED, retired_in=9),
    }
    index = render_index(pages)
    assert "- [a](patterns/a.md): problem + cause + fix (1 episode(s), rounds 2-2)" in index
    assert index.index("## Merged and retired pages") < index.index("- [b](patterns/b.md): retired in round 9")
    assert lint_files({f"wiki/{path}": text for path, text in as_files(pages).items()}) == []


@pytest.mark.parametrize("count", [0, 10, 300])
def test_the_maintainer_view_stays_within_its_budget_however_large_the_wiki(count):
    pages = {
        f"page-{i}": make_page(f"page-{i}", f"summary of pattern {i} about words", {f"t{i}": i}) for i in range(count)
    }
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
    after = read_wiki(
        {**files, **{p.removeprefix("wiki/"): t for p, t in result.changes.items() if p.startswith("wiki/")}}
    )
    kept, gone = after.pages["slips"], after.pages["reversal-slip"]
    assert kept.meta.tasks() == ["t1", "t2", "t3"] and "- t3: wrong" in kept.sections[Section.EVIDENCE]
    assert gone.meta.status == PageStatus.MERGED and gone.meta.merged_into == "slips"
    assert "_Merged into [slips](slips.md)._" in result.changes["wiki/patterns/reversal-slip.md"]
    assert "[the slip](slips.md)" in result.changes["wiki/patterns/fresh.md"]
    assert (
        result.changes["skills/spell/PURPOSE.md"] == "## Patterns Addressed\n- [r](../../wiki/patterns/slips.md#fix)\n"
    )
    assert after.pages["old"].meta.status == PageStatus.RETIRED
    tree = {f"wiki/{path}": text for path, text in files.items()} | {
        path: text for path, text in result.changes.items() if path.startswith("wiki/")
    }
    assert lint_files(tree) == []
    again = consolidate(
        {p.removeprefix("wiki/"): t for p, t in tree.items()}, {}, 10, WikiSettings(retire_after=5), WordOverlap(0.6)
    )
    assert (again.merged, again.retired, again.changes) == ([], [], {})


def test_offline_pages_merge_when_one_mined_pattern_covers_another():
    broad = make_page("avoid-eat-x", "a", {"t1": 1}, rule="avoid", pattern="eat *")
    narrow = make_page("avoid-eat-apple", "b", {"t2": 1}, rule="avoid", pattern="eat apple")
    other = make_page("prefer-eat-apple", "c", {"t3": 1}, rule="prefer", pattern="eat apple")
    rule = PatternCover()
    assert rule.keeper(narrow, broad) is broad and rule.keeper(broad, narrow) is broad
    assert rule.keeper(narrow, other) is None and rule.keeper(broad, broad) is None


# -- what the maintainer left out is derived, what cannot be derived is refused ----------------------

FOUR_SECTIONS = (
    "# Slips\n\n## Description\nThe agent returns the word unreversed. It reads it whole.\n\n"
    "## Root cause\nIt reads the word whole.\n\n## Evidence\n{cites}: answered `olleh`.\n\n"
    "## Fix\nSpell it letter by letter.\n"
)


def create(content: str, **fields) -> MaintainerOutput:
    return MaintainerOutput(create_patterns=[PageCreate(name="slips", content=content, **fields)], append_log="log")


def test_a_page_without_summary_or_evidence_list_is_written_with_both_derived_and_reported():
    update = apply_maintainer_output(
        create(FOUR_SECTIONS.format(cites="t1 and t2")),
        Wiki(pages={}),
        3,
        shown=["t1", "t2", "t3"],
        known=["t1", "t2", "t3"],
    )
    assert update.refused == [] and update.report == ["created slips"]
    page = parse_page("slips", update.changes["wiki/patterns/slips.md"])
    assert page.meta.summary == "The agent returns the word unreversed."
    assert page.meta.evidence == [Evidence(task="t1", round=3), Evidence(task="t2", round=3)]
    assert update.derived == {"slips": Derivation("The agent returns the word unreversed.", ["t1", "t2"])}
    assert update.derived_lines() == [
        "slips: summary from the Description's first sentence (The agent returns the "
        "word unreversed.); evidence from the shown task ids the page cites (t1, t2)"
    ]
    assert "(patterns/slips.md): The agent returns the word unreversed. (2 episode(s)" in update.changes[INDEX]


def test_a_page_given_its_summary_and_evidence_reports_nothing_derived():
    update = apply_maintainer_output(
        create(FOUR_SECTIONS.format(cites="t1"), summary="slips + whole + spell", evidence=["t1"]),
        Wiki(pages={}),
        1,
        shown=["t1"],
    )
    assert update.report == ["created slips"] and update.derived == {}
    assert parse_page("slips", update.changes["wiki/patterns/slips.md"]).meta.summary == "slips + whole + spell"


@pytest.mark.parametrize(
    "content, reason",
    [
        (FOUR_SECTIONS.format(cites="t1").split("## Fix")[0], "missing section(s): ## Fix"),
        (FOUR_SECTIONS.format(cites="t1 and t9"), "cites task ids it was not shown: t9"),
        (FOUR_SECTIONS.format(cites="someone"), "cites no task id of the traces shown"),
        (
            FOUR_SECTIONS.format(cites="t1").replace(
                "The agent returns the word unreversed. It reads it whole.", "[](x.md)"
            ),
            "no summary, and no sentence in its Description to derive one from",
        ),
        ("reversed word only", "missing section(s): ## Root cause, ## Evidence, ## Fix"),
    ],
)
def test_what_cannot_be_derived_still_refuses_the_page(content, reason):
    update = apply_maintainer_output(create(content), Wiki(pages={}), 1, shown=["t1"], known=["t1", "t9"])
    assert update.refused == [f"create 'slips': {reason}"]
    assert update.derived == {} and "wiki/patterns/slips.md" not in update.changes


def test_an_update_to_a_page_with_no_summary_derives_one_and_reports_the_cited_evidence():
    old = make_page("slips", "", {"t1": 1})
    edit = PageUpdate(name="slips", add_evidence="- t2: wrong again")
    update = apply_maintainer_output(
        MaintainerOutput(update_patterns=[edit], append_log="log"), Wiki(pages={"slips": old}), 2, shown=["t2"]
    )
    assert update.refused == [] and update.report == ["updated slips"]
    page = parse_page("slips", update.changes["wiki/patterns/slips.md"])
    assert page.meta.summary == "About slips." and page.meta.tasks() == ["t1", "t2"]
    assert update.derived == {"slips": Derivation("About slips.", ["t2"])}


@pytest.mark.parametrize(
    "description, sentence",
    [
        ("Words come back unreversed. Then the answer is wrong.", "Words come back unreversed."),
        ("- Reads [the word](other.md) whole!\n- Never spells it.", "Reads the word whole!"),
        ("> A quoted line\nthat wraps\n\nA second paragraph.", "A quoted line that wraps"),
        ("Version 1.5 of the tool fails", "Version 1.5 of the tool fails"),
        ("x" * 500, "x" * 400),
    ],
)
def test_the_first_sentence_is_one_plain_line(description, sentence):
    assert first_sentence(description) == sentence


def test_a_summary_derived_for_a_page_is_not_reported_once_a_later_request_in_the_reply_gives_one():
    content = FOUR_SECTIONS.format(cites="t1")
    output = MaintainerOutput(
        create_patterns=[
            PageCreate(name="slips", content=content),
            PageCreate(name="slips", content=content, summary="slips + fix"),
        ],
        append_log="log",
    )
    update = apply_maintainer_output(output, Wiki(pages={}), 1, shown=["t1"])
    assert update.report == ["created slips", "added evidence to existing page slips"]
    assert parse_page("slips", update.changes["wiki/patterns/slips.md"]).meta.summary == "slips + fix"
    assert update.derived == {"slips": Derivation(evidence=["t1"])}
