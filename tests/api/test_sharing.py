"""Using the skills elsewhere through the library API: `lint` lists the skills' own problems and
their held-out text as one list, each once, in path order; the host's skill set reads main or
the working tree; an MCP transport that does not exist is refused in one line."""

import pytest

from inprocess import scripted_workspace
from wikiskill import api
from wikiskill.core.errors import WikiskillError
from workspaces import skill_md, write

HELD_OUT = "Tip: write the word tattoo backwards letter by letter.\n"  # val task val-01's question


def test_lint_lists_the_skills_problems_and_their_held_out_text_once_each_in_path_order(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    write(ws.root, "skills/answer-sheet/SKILL.md", skill_md("answer-sheet", extra=HELD_OUT))
    write(ws.root, "skills/bare/SKILL.md", "no front matter here\n")
    problems = api.lint(ws)
    assert [p.path for p in problems] == sorted(p.path for p in problems)
    assert len(set(problems)) == len(problems)
    assert {p.path for p in problems} == {"skills/answer-sheet/SKILL.md", "skills/bare/SKILL.md"}
    [leak] = [p for p in problems if p.path == "skills/answer-sheet/SKILL.md"]
    assert 'shares "write the word tattoo backwards letter by letter" with val task val-01' in leak.message


def test_the_hosts_skill_set_reads_main_or_with_no_ref_the_working_tree(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    write(ws.root, "skills/spell-letters/SKILL.md", skill_md("spell-letters"))
    assert api.skill_set(ws.root).names() == []
    assert api.skill_set(ws.root, ref=None).names() == ["spell-letters"]


def test_an_unknown_mcp_transport_is_refused_in_one_line_naming_the_transports(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    with pytest.raises(WikiskillError, match="^unknown transport 'pigeon': use stdio or http$"):
        api.serve_mcp(ws, transport="pigeon")
