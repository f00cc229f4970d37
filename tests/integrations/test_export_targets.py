"""`wikiskill export DIR --target agents|claude|codex|harbor`: each writes the folder its host reads, with
the same valid Agent Skills folders, and never a host folder the user did not name."""

from pathlib import Path

import pytest
import skills_ref
from typer.testing import CliRunner

from conftest import git
from wikiskill import api
from wikiskill.cli import app
from wikiskill.integrations.export import MANIFEST
from wikiskill.integrations.export_targets import ExportError
from wikiskill.store.workspace import Workspace
from workspaces import commit_skills, new_workspace

SKILLS = ["convert-units", "spell-letters"]


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    workspace = new_workspace(tmp_path)
    commit_skills(workspace, SKILLS)
    return workspace


def tree(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()
    }


@pytest.mark.parametrize(
    "target, folder", [("agents", "."), ("claude", ".claude/skills"), ("codex", ".agents/skills"), ("harbor", ".")]
)
def test_each_target_writes_the_folder_its_host_reads(ws, tmp_path, target, folder):
    project = tmp_path / "project"
    result = api.export(ws, project, target=target)
    skills_dir = (project / folder).resolve()
    assert result.dest == skills_dir and result.skills == SKILLS
    expected = {MANIFEST}
    for name in SKILLS:
        expected |= {f"{name}/SKILL.md", f"{name}/PURPOSE.md"}
        assert (skills_dir / name / "SKILL.md").read_bytes() == git(
            ws.root, "show", f"main:skills/{name}/SKILL.md"
        ).encode()
        assert skills_ref.validate(skills_dir / name) == []
    assert set(tree(project)) == {f"{folder}/{path}".removeprefix("./") for path in expected}


def test_claude_and_codex_exports_share_a_project_without_touching_each_other(ws, tmp_path):
    project = tmp_path / "project"
    for target in ("claude", "codex"):
        api.export(ws, project, target=target)
    claude, codex = tree(project / ".claude/skills"), tree(project / ".agents/skills")
    assert claude.keys() == codex.keys() and all(claude[path] == codex[path] for path in claude if path != MANIFEST)
    ws.commit({"skills/spell-letters/SKILL.md": None, "skills/spell-letters/PURPOSE.md": None}, "retire spell-letters")
    again = api.export(ws, project, target="claude")
    assert again.removed == ["spell-letters/PURPOSE.md", "spell-letters/SKILL.md"]
    assert not (project / ".claude/skills/spell-letters").exists()
    assert tree(project / ".agents/skills") == codex  # the codex export is left as it was


def test_home_named_as_dir_gets_the_users_skills_folder(ws, tmp_path):
    home = Path.home()  # a temporary folder in tests (conftest)
    result = CliRunner().invoke(app, ["-C", str(ws.root), "export", "~", "--target", "claude"])
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in (home / ".claude/skills").iterdir()) == [MANIFEST, *SKILLS]
    assert {path.name for path in home.iterdir()} == {".claude"}


@pytest.mark.parametrize(
    "target, named", [("claude", ".claude/skills"), ("codex", ".agents/skills"), ("codex", ".codex/skills")]
)
def test_a_host_skills_folder_named_as_dir_is_refused_rather_than_nested(ws, tmp_path, target, named):
    dest = tmp_path / "project" / named
    with pytest.raises(ExportError, match="skills folder itself.*--target agents"):
        api.export(ws, dest, target=target)
    assert not (tmp_path / "project").exists()
    api.export(ws, dest, target="agents")  # what the message offers
    assert sorted(path.name for path in dest.iterdir()) == [MANIFEST, *SKILLS]


def test_an_unknown_target_is_a_one_line_error(ws, tmp_path):
    result = CliRunner().invoke(app, ["-C", str(ws.root), "export", str(tmp_path / "out"), "--target", "cursor"])
    assert result.exit_code == 1
    assert result.output.strip() == "error: unknown export target 'cursor': use agents, claude, codex or harbor"
    assert not (tmp_path / "out").exists()


def test_a_harbor_export_into_one_skill_folder_is_refused_since_harbor_would_read_it_as_one_skill(ws, tmp_path):
    own = tmp_path / "my-skill"
    own.mkdir()
    (own / "SKILL.md").write_text("---\nname: my-skill\ndescription: mine\n---\nMine.\n")
    with pytest.raises(ExportError, match="holds a SKILL.md, so Harbor would read it as one skill"):
        api.export(ws, own, target="harbor")
    assert [path.name for path in own.iterdir()] == ["SKILL.md"]
