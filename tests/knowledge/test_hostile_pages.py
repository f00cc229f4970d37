"""Hostile text in the knowledge a model writes: skill front matter cannot be injected, and any
page text reads as a page that renders back to itself."""

import json

from hypothesis import given
from hypothesis import strategies as st

from hostile_input import HOSTILE_NAMES, PROPERTY, page_text
from scripted import skill_md
from wikiskill.knowledge.pages import parse_page
from wikiskill.knowledge.proposals import InvalidProposal, prepare_proposal
from wikiskill.knowledge.skills import split_front_matter


@PROPERTY
@given(st.sampled_from(HOSTILE_NAMES + ["train-00"]), st.text(max_size=200))
def test_skill_front_matter_cannot_be_injected(name, description):
    text = skill_md("x", "MARKER").replace(
        "description: Spell the word letter by letter before answering.",
        f"description: {json.dumps(description, ensure_ascii=False)}",
    )
    try:
        proposal = prepare_proposal({"action": "create", "name": name, "skill_md": text}, {}, 1)
    except InvalidProposal as rejected:
        assert rejected.reason.strip()
        return
    data, body = split_front_matter(proposal.changes[f"skills/{proposal.name}/SKILL.md"])
    assert data["name"] == proposal.name and "evil" not in data
    assert data["description"] == split_front_matter(text)[0]["description"]  # as YAML read it, no more
    assert "MARKER" in body


@PROPERTY
@given(page_text)
def test_any_page_text_reads_as_a_page_and_renders_to_one_that_reads_back_the_same(raw):
    page = parse_page("p", raw)
    again = parse_page("p", page.render())
    assert again.meta == page.meta
    assert again.missing_sections() == page.missing_sections()
