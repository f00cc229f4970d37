"""`wikiskill export`: valid Agent Skills folders, byte-identical idempotent re-export, removal of
skills that are gone without touching a user's files, and refusals."""

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import git
from wikiskill.cli import app
from wikiskill.integrations.export import MANIFEST, ExportError, export_skills
from wikiskill.knowledge.links import links
from wikiskill.knowledge.skills import skill_problems
from wikiskill.store.workspace import Workspace, format_message
from workspaces import commit_skills, new_workspace, skill_md


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        path.relative_to(folder).as_posix(): (path.read_bytes(), path.stat().st_mode & 0o777)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    workspace = new_workspace(tmp_path)
    commit_skills(workspace, ["spell-letters", "convert-units"])
    # a skill that ships a script, committed by hand so git records the executable bit
    script = workspace.root / "skills/quote-shell-paths/scripts/check.sh"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\necho ok\n", encoding="utf-8")
    script.chmod(0o755)
    (workspace.root / "skills/quote-shell-paths/SKILL.md").write_text(skill_md("quote-shell-paths"), encoding="utf-8")
    workspace.commit_working_tree(["skills"], format_message("human: add a skill", {"Step": "human", "Round": 1}))
    return workspace


def test_export_writes_valid_agent_skills_folders(ws, tmp_path):
    out = tmp_path / "out"
    result = export_skills(ws, out)
    assert result.skills == ["convert-units", "quote-shell-paths", "spell-letters"] and result.skipped == {}
    files = snapshot(out)
    assert set(files) == {
        MANIFEST,
        "convert-units/SKILL.md",
        "convert-units/PURPOSE.md",
        "spell-letters/SKILL.md",
        "spell-letters/PURPOSE.md",
        "quote-shell-paths/SKILL.md",
        "quote-shell-paths/scripts/check.sh",
    }
    for name in result.skills:
        assert skill_problems((out / name / "SKILL.md").read_text(encoding="utf-8"), name) == []
        assert (out / name / "SKILL.md").read_bytes() == git(ws.root, "show", f"main:skills/{name}/SKILL.md").encode()
    assert files["quote-shell-paths/scripts/check.sh"][1] == 0o755
    assert files["spell-letters/SKILL.md"][1] == 0o644


def test_an_independent_validator_accepts_the_export(ws, tmp_path):
    import skills_ref  # the Agent Skills reference validator (a test dependency)

    out = tmp_path / "out"
    export_skills(ws, out)
    folders = sorted(p for p in out.iterdir() if p.is_dir())
    assert [skills_ref.validate(folder) for folder in folders] == [[], [], []]
    prompt = skills_ref.to_prompt(folders)
    assert all(
        f"<name>\n{folder.name}\n</name>" in prompt or f"<name>{folder.name}</name>" in prompt for folder in folders
    )


def test_reexport_is_byte_identical_and_writes_nothing(ws, tmp_path):
    out = tmp_path / "out"
    export_skills(ws, out)
    before = snapshot(out)
    mtimes = {path: path.stat().st_mtime_ns for path in out.rglob("*")}
    again = export_skills(ws, out)
    assert again.written == [] and again.removed == []
    assert snapshot(out) == before
    assert {path: path.stat().st_mtime_ns for path in out.rglob("*")} == mtimes


def test_removed_skill_disappears_but_user_files_survive(ws, tmp_path):
    out = tmp_path / "out"
    export_skills(ws, out)
    (out / "README.md").write_text("my notes\n", encoding="utf-8")
    (out / "convert-units" / "my-notes.md").write_text("mine\n", encoding="utf-8")
    ws.commit(
        {
            "skills/spell-letters/SKILL.md": None,
            "skills/spell-letters/PURPOSE.md": None,
            "skills/convert-units/SKILL.md": None,
            "skills/convert-units/PURPOSE.md": None,
        },
        format_message("rollback: two skills", {"Step": "rollback", "Round": 2}),
    )
    result = export_skills(ws, out)
    assert not (out / "spell-letters").exists()
    assert sorted(result.removed) == [
        "convert-units/PURPOSE.md",
        "convert-units/SKILL.md",
        "spell-letters/PURPOSE.md",
        "spell-letters/SKILL.md",
    ]
    assert (out / "README.md").read_text(encoding="utf-8") == "my notes\n"
    assert [p.name for p in (out / "convert-units").iterdir()] == ["my-notes.md"]  # only the user's file is left
    assert json.loads((out / MANIFEST).read_text(encoding="utf-8"))["skills"] == {
        "quote-shell-paths": ["SKILL.md", "scripts/check.sh"]
    }


def test_export_at_a_past_ref(ws, tmp_path):
    first = git(ws.root, "rev-parse", "main~1").strip()
    result = export_skills(ws, tmp_path / "old", ref=first)
    assert result.commit == first and result.skills == ["convert-units", "spell-letters"]
    assert not (tmp_path / "old" / "quote-shell-paths").exists()


def test_refusals_leave_nothing_half_written(ws, tmp_path):
    with pytest.raises(ExportError, match="inside the workspace's skills/"):
        export_skills(ws, ws.root / "skills" / "exported")
    out = tmp_path / "out"
    (out / "spell-letters").mkdir(parents=True)
    (out / "spell-letters" / "SKILL.md").write_text("the user's own skill\n", encoding="utf-8")
    with pytest.raises(ExportError, match="not written by `wikiskill export`"):
        export_skills(ws, out)
    assert sorted(p.name for p in out.iterdir()) == ["spell-letters"]  # nothing else was written
    assert (out / "spell-letters" / "SKILL.md").read_text(encoding="utf-8") == "the user's own skill\n"


def test_a_tampered_manifest_cannot_make_export_delete_outside(ws, tmp_path):
    out = tmp_path / "out"
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    export_skills(ws, out)
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    manifest["skills"]["spell-letters"].append("../../victim.txt")
    (out / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ExportError, match="invalid entry"):
        export_skills(ws, out)
    assert victim.read_text(encoding="utf-8") == "keep me\n"


def test_a_skill_that_breaks_the_rules_is_skipped(ws, tmp_path):
    ws.commit(
        {"skills/Bad_Skill/SKILL.md": "---\nname: Bad_Skill\ndescription: x\n---\nbody\n"},
        format_message("human: bad", {"Step": "human", "Round": 1}),
    )
    result = export_skills(ws, tmp_path / "out")
    assert "Bad_Skill" in result.skipped and "lowercase" in result.skipped["Bad_Skill"]
    assert not (tmp_path / "out" / "Bad_Skill").exists()


def test_cli_export(ws, tmp_path):
    runner = CliRunner()
    out = tmp_path / "cli-out"
    result = runner.invoke(app, ["-C", str(ws.root), "export", str(out), "--ref", "main"])
    assert result.exit_code == 0, result.output
    assert "Exported 3 skill(s) from main" in result.output and "6 file(s) written" in result.output
    assert os.access(out / "quote-shell-paths/scripts/check.sh", os.X_OK)
    refused = runner.invoke(app, ["-C", str(ws.root), "export", str(ws.root / "skills")])
    assert refused.exit_code == 1 and "error: refusing to export" in refused.output


def test_no_exported_link_leaves_the_export_folder(ws, tmp_path):
    purpose = (
        "# spell-letters\n\n## Patterns Addressed\n- [slips](../../wiki/patterns/slips.md): reversal\n"
        "- [sibling](../convert-units/SKILL.md) and [web](https://example.org/x.md) and [abs](/etc/x.md)\n"
        "- `[code](../../wiki/index.md)`\n"
    )
    ws.commit({"skills/spell-letters/PURPOSE.md": purpose}, format_message("human: purpose", {"Step": "human"}))
    out = tmp_path / "out"
    export_skills(ws, out)
    exported = (out / "spell-letters/PURPOSE.md").read_text()
    assert exported == (
        "# spell-letters\n\n## Patterns Addressed\n- slips: reversal\n"
        "- [sibling](../convert-units/SKILL.md) and [web](https://example.org/x.md) and abs\n"
        "- `[code](../../wiki/index.md)`\n"
    )
    for page in out.rglob("*.md"):
        for target in links(page.read_text()):
            if "://" not in target:
                assert (page.parent / target.split("#")[0]).resolve().is_relative_to(out.resolve()), (page, target)
