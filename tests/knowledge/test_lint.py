"""`wikiskill lint` on the working tree: Agent Skills rules, Markdown links, index consistency."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from wikiskill.cli import app
from wikiskill.knowledge.lint import Problem, links, lint_files, lint_workspace
from wikiskill.store.workspace import Workspace
from workspaces import commit_skills, new_workspace, skill_md, write

PAGE = (
    "---\nkind: pattern\n---\n\n# {slug}\n\nSee [the index](../index.md) and [trace](../../raw/r001/train/t1.json).\n"
)


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    """A clean workspace: two skills linking into the wiki, one page, an index that lists it."""
    workspace = new_workspace(tmp_path)
    commit_skills(workspace, ["spell-letters", "convert-units"])
    root = workspace.root
    write(root, "raw/r001/train/t1.json", "{}\n")
    write(root, "wiki/patterns/reversal-fails.md", PAGE.format(slug="reversal-fails"))
    write(
        root,
        "wiki/index.md",
        "# Wiki index\n\nOne line per page: `- [slug](patterns/slug.md): summary`.\n\n"
        "- [reversal-fails](patterns/reversal-fails.md): reversing goes wrong; spell first\n",
    )
    write(
        root,
        "skills/spell-letters/PURPOSE.md",
        "# spell-letters\n\nAddresses [reversal-fails](../../wiki/patterns/reversal-fails.md#fix).\n"
        "Background: [Agent Skills](https://agentskills.io) and [below](#history).\n\n"
        "```markdown\n[not a link](missing.md)\n```\n\nInline `[code](nowhere.md)` is not a link either.\n",
    )
    return workspace


def test_a_clean_workspace_has_no_problems(ws):
    assert lint_workspace(ws.root) == []
    result = CliRunner().invoke(app, ["-C", str(ws.root), "lint"])
    assert result.exit_code == 0 and result.output == "no problems\n"


def test_bad_skill_name_and_folder_mismatch(ws):
    write(ws.root, "skills/Bad_Name/SKILL.md", skill_md("Bad_Name"))
    write(ws.root, "skills/other-folder/SKILL.md", skill_md("convert-units"))
    write(ws.root, "skills/no-skill-md/PURPOSE.md", "# orphan\n")
    problems = lint_workspace(ws.root)
    assert [p.path for p in problems] == [
        "skills/Bad_Name/SKILL.md",
        "skills/no-skill-md",
        "skills/other-folder/SKILL.md",
    ]
    assert "lowercase letters, digits and single hyphens" in problems[0].message
    assert problems[1].message == "skill folder has no SKILL.md"
    assert "must equal the directory name 'other-folder'" in problems[2].message


def test_missing_sections_and_broken_front_matter(ws):
    write(ws.root, "skills/spell-letters/SKILL.md", "---\nname: spell-letters\ndescription: x\n---\n\nJust text.\n")
    write(ws.root, "skills/convert-units/SKILL.md", "no front matter at all\n")
    write(ws.root, "skills/deep-yaml/SKILL.md", "---\nname: deep-yaml\ndescription: " + "[" * 5000 + "\n---\n")
    messages = {p.path: p.message for p in lint_workspace(ws.root)}
    assert messages["skills/spell-letters/SKILL.md"].startswith("missing sections: When to Apply")
    assert "front matter" in messages["skills/convert-units/SKILL.md"]
    assert messages["skills/deep-yaml/SKILL.md"].startswith("front matter is not valid YAML")


def test_broken_links_are_reported_and_web_links_anchors_code_are_not(ws):
    write(
        ws.root,
        "wiki/patterns/reversal-fails.md",
        PAGE.format(slug="reversal-fails") + "Also [gone](gone.md), [up](../../../outside.md), "
        "[ref]: ../../skills/spell-letters/SKILL.md\n\n[def]: ./nope.md\n",
    )
    problems = lint_workspace(ws.root)
    assert problems == [
        Problem("wiki/patterns/reversal-fails.md", "broken link './nope.md': wiki/patterns/nope.md does not exist"),
        Problem("wiki/patterns/reversal-fails.md", "broken link 'gone.md': wiki/patterns/gone.md does not exist"),
        Problem("wiki/patterns/reversal-fails.md", "link '../../../outside.md' points outside the workspace"),
    ]


def test_deleting_a_page_breaks_the_index_and_the_skill_link(ws):
    (ws.root / "wiki/patterns/reversal-fails.md").unlink()
    write(ws.root, "wiki/patterns/unlisted.md", PAGE.format(slug="unlisted"))
    problems = lint_workspace(ws.root)
    assert problems == [
        Problem(
            "skills/spell-letters/PURPOSE.md",
            "broken link '../../wiki/patterns/reversal-fails.md#fix': wiki/patterns/reversal-fails.md does not exist",
        ),
        # one problem for the index line, not a second one as a broken link
        Problem("wiki/index.md", "lists patterns/reversal-fails.md, which does not exist"),
        Problem(
            "wiki/patterns/unlisted.md",
            "is not listed in wiki/index.md (add `- [unlisted](patterns/unlisted.md): summary`)",
        ),
    ]


def test_cli_prints_one_line_per_problem_and_exits_1(ws):
    write(ws.root, "skills/Bad_Name/SKILL.md", skill_md("Bad_Name"))
    write(ws.root, "wiki/patterns/unlisted.md", PAGE.format(slug="unlisted") + "[x](missing-page.md)\n")
    result = CliRunner().invoke(app, ["-C", str(ws.root), "lint"])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("skills/Bad_Name/SKILL.md: name 'Bad_Name'")
    assert (
        lines[1] == "wiki/patterns/unlisted.md: broken link 'missing-page.md': "
        "wiki/patterns/missing-page.md does not exist"
    )
    assert lines[2].startswith("wiki/patterns/unlisted.md: is not listed in wiki/index.md")


def test_symlinks_and_editor_files(ws, tmp_path):
    (tmp_path / "elsewhere.md").write_text("x\n", encoding="utf-8")
    (ws.root / "wiki/patterns/linked.md").symlink_to(tmp_path / "elsewhere.md")
    write(ws.root, "wiki/patterns/.reversal-fails.md.swp", "[broken](nothing.md)\n")
    assert lint_workspace(ws.root) == [
        Problem("wiki/patterns/linked.md", "is a symbolic link, not read (skills/ and wiki/ hold plain files only)")
    ]


def test_lint_files_works_on_an_in_memory_tree():
    files = {"wiki/index.md": "- [a](patterns/a.md): page a\n", "wiki/patterns/a.md": "[b](b.md)\n"}
    assert lint_files(files) == [Problem("wiki/patterns/a.md", "broken link 'b.md': wiki/patterns/b.md does not exist")]
    assert (
        lint_files(
            {
                **files,
                "wiki/patterns/b.md": "# b\n",
                "wiki/index.md": files["wiki/index.md"] + "- [b](patterns/b.md): page b\n",
            }
        )
        == []
    )
    assert links('[a](<with space.md> "title") ![img](pic.png) `[c](d.md)`') == ["with space.md", "pic.png"]


def test_overlapping_skills_are_a_warning_that_does_not_fail_lint(ws):
    text = (ws.root / "skills/spell-letters/SKILL.md").read_text().replace("spell-letters", "spell-letters-again")
    write(ws.root, "skills/spell-letters-again/SKILL.md", text)
    problems = lint_workspace(ws.root)
    assert [(p.path, p.warning) for p in problems] == [("skills/spell-letters-again/SKILL.md", True)]
    assert (
        "overlaps skill 'spell-letters' (92% of their words are shared): "
        "merge them or retire one" in problems[0].message
    )
    result = CliRunner().invoke(app, ["-C", str(ws.root), "lint"])
    assert result.exit_code == 0 and result.output.startswith("warning: skills/spell-letters-again/SKILL.md: overlaps")
