"""A proposal is read by the same pydantic models that are the proposer's `finish` schema: a field
added to a model is shown to the model and checked in what it sends, never silently ignored."""

from typing import Annotated, get_args

import pytest
from pydantic import Field

from scripted import skill_md
from wikiskill.knowledge import proposals
from wikiskill.knowledge.proposals import (
    CreateSkill,
    InvalidProposal,
    ProposalRequest,
    ProposalSchema,
    prepare_proposal,
)
from wikiskill.llm.toolcalls import json_schema
from wikiskill.roles.proposer import TOOLS

SKILLS = {"spell-letters/SKILL.md": skill_md("spell-letters", "MARKER"), "spell-letters/PURPOSE.md": "# p\n"}
VALID = {
    "create": {
        "action": "create",
        "name": "new-skill",
        "description": "Spell words.",
        "when_to_apply": "reversals",
        "when_not_to_apply": "others",
        "instructions": "1. Spell.",
        "rationale": "t1 failed",
        "skill_md": "",
        "purpose_md": "# new-skill\n",
    },
    "patch": {
        "action": "patch",
        "name": "spell-letters",
        "edits": [{"op": "append", "content": "- more"}],
        "rationale": "t1 failed",
    },
    "describe": {
        "action": "describe",
        "name": "spell-letters",
        "description": "Reverse or count a word's letters.",
        "rationale": "rarely loaded",
    },
    "retire": {"action": "retire", "name": "spell-letters", "rationale": "unused"},
    "no_action": {"action": "no_action", "rationale": "nothing helps"},
}
MODELS = get_args(get_args(ProposalRequest)[0])


def test_the_finish_tool_shows_the_schema_the_parser_reads():
    finish = next(tool["function"] for tool in TOOLS if tool["function"]["name"] == "finish")
    assert finish["parameters"] == json_schema(ProposalSchema)
    assert {str(get_args(model.model_fields["action"].annotation)[0]) for model in MODELS} == set(VALID)


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_every_field_of_every_proposal_model_is_checked_by_the_parser(model):
    action = str(get_args(model.model_fields["action"].annotation)[0])
    example = VALID[action]
    assert set(example) == set(model.model_fields)  # the example gives every field
    assert prepare_proposal(example, SKILLS, 2).request == model.model_validate(example)
    for key in model.model_fields:
        with pytest.raises(InvalidProposal) as refused:
            prepare_proposal({**example, key: {"not": ["text"]}}, SKILLS, 2)
        assert key in refused.value.reason


class CreateWithOwner(CreateSkill):
    owner: str = Field(description="who keeps the skill")


class SchemaWithOwner(ProposalSchema):
    proposal: Annotated[CreateWithOwner | MODELS[1] | MODELS[2] | MODELS[3] | MODELS[4], Field(discriminator="action")]


def test_a_field_added_to_a_proposal_model_is_honoured_and_required_by_the_parser(monkeypatch):
    monkeypatch.setattr(proposals, "ProposalSchema", SchemaWithOwner)
    with pytest.raises(InvalidProposal, match="`owner` is missing"):
        prepare_proposal(VALID["create"], SKILLS, 2)
    proposal = prepare_proposal({**VALID["create"], "owner": "ops"}, SKILLS, 2)
    assert isinstance(proposal.request, CreateWithOwner) and proposal.request.owner == "ops"


def test_a_retire_proposal_removes_the_whole_skill_folder_and_nothing_else():
    from wikiskill.knowledge.proposals import InvalidProposal, prepare_proposal

    files = {"spell/SKILL.md": "s", "spell/PURPOSE.md": "p", "spell/scripts/x.sh": "x", "other/SKILL.md": "o"}
    proposal = prepare_proposal({"action": "retire", "name": "Spell", "rationale": "overlaps other"}, files, 3)
    assert proposal.changes == {
        "skills/spell/SKILL.md": None,
        "skills/spell/PURPOSE.md": None,
        "skills/spell/scripts/x.sh": None,
    }
    with pytest.raises(InvalidProposal, match="cannot retire 'ghost': no such skill"):
        prepare_proposal({"action": "retire", "name": "ghost"}, files, 3)


def test_a_describe_proposal_rewrites_the_front_matter_description_and_nothing_else_of_skill_md():
    proposal = prepare_proposal(
        {**VALID["describe"], "description": "Load this  when a question asks to reverse\nor count letters."}, SKILLS, 4
    )
    before, after = SKILLS["spell-letters/SKILL.md"], proposal.changes["skills/spell-letters/SKILL.md"]
    assert after is not None
    assert "description: Load this when a question asks to reverse or count letters." in after
    assert "Spell the word letter by letter" not in after
    assert after.split("\n---\n", 1)[1] == before.split("\n---\n", 1)[1]  # the body as it was
    assert "wikiskill-round: '4'" in after
    assert "described: rarely loaded" in (proposal.changes["skills/spell-letters/PURPOSE.md"] or "")
    with pytest.raises(InvalidProposal, match="cannot describe 'ghost': no such skill"):
        prepare_proposal({**VALID["describe"], "name": "ghost"}, SKILLS, 4)
    with pytest.raises(InvalidProposal, match="`description` must be a non-empty string"):
        prepare_proposal({**VALID["describe"], "description": "  "}, SKILLS, 4)


def test_a_describe_of_a_file_a_person_wrote_under_skills_is_refused_as_not_a_skill_folder():
    files = {**SKILLS, "house-rules": "a person's own notes, not a skill folder\n"}
    with pytest.raises(InvalidProposal, match="skills/house-rules is an existing file, not a skill folder"):
        prepare_proposal({**VALID["describe"], "name": "house-rules"}, files, 4)
