"""SKILL.md files: skill names, the Agent Skills rules, and front matter rewritten by the harness."""

import pytest

from wikiskill.core.errors import ProposalError
from wikiskill.knowledge.skills import normalize_name, parse_skill, skill_problems, with_front_matter

GOOD = (
    "---\nname: break-loop\ndescription: Leave a loop.\n---\n\n## When to Apply\nLooping.\n\n"
    "## When NOT to Apply\nProgressing.\n\n## Instructions\n1. Stop.\n"
)


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("Break_Repetition Loop", "break-repetition-loop"),
        ("  --Go  North!!--", "go-north"),
        ("a" * 80, "a" * 64),
        ("../../etc/passwd", "etc-passwd"),
    ],
)
def test_names_are_normalised(raw, expected):
    assert normalize_name(raw) == expected


@pytest.mark.parametrize("raw", ["", "!!!", None, 42])
def test_names_without_letters_are_rejected(raw):
    with pytest.raises(ProposalError):
        normalize_name(raw)


def test_skill_rules():
    assert skill_problems(GOOD, "break-loop") == []
    assert "must equal the directory name" in skill_problems(GOOD, "other")[0]
    assert skill_problems(GOOD.replace("name: break-loop", "name: Break--Loop"), "Break--Loop")
    assert skill_problems(GOOD.replace("description: Leave a loop.", "description: ''"), "break-loop")
    assert skill_problems(GOOD.replace("description: Leave a loop.", "description: " + "x" * 1025), "break-loop")
    assert "metadata must map strings to strings" in skill_problems(
        GOOD.replace("---\n\n", "metadata:\n  round: 3\n---\n\n", 1), "break-loop"
    )
    assert skill_problems("no front matter", "x") == ["SKILL.md must start with YAML front matter between '---' lines"]
    assert skill_problems("---\n- a list\n---\nbody", "x") == ["front matter must be a YAML mapping"]
    assert (
        "missing sections: Instructions" in skill_problems(GOOD.replace("## Instructions", "## Steps"), "break-loop")[0]
    )


def test_front_matter_is_rewritten_with_string_metadata():
    text = with_front_matter(GOOD.replace("name: break-loop", "name: Whatever"), "break-loop", {"wikiskill-round": "3"})
    skill = parse_skill(text)
    assert skill.name == "break-loop" and skill.metadata == {"wikiskill-round": "3"}
    assert skill.section("Instructions") == "1. Stop."
    assert skill_problems(text, "break-loop") == []
