"""`rollback NAME` after a person edited the skill, by a commit of their own or through
`evolve --commit-human-edits`: by default every change of the skill goes, in one commit that names
the person's edits; `--keep-human-edits` keeps them where they can be separated from the accepted
changes and otherwise refuses, naming the command that works. Workspaces evolved by the scripted
world: round 1 creates `spell-letters` (val 0.500 -> 0.833)."""

import re
import shutil

import pytest
from typer.testing import CliRunner

from conftest import git
from inprocess import WorldModel, evolve_scripted, merge_change, scripted_workspace
from scripted import ScriptedWorld, skill_md
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.cli import app
from wikiskill.core.errors import WorkspaceError
from wikiskill.history.rollback import accepted_merges
from wikiskill.store.trailers import Step
from wikiskill.store.workspace import MAIN, Workspace

SKILL = "skills/spell-letters/SKILL.md"
NOTE = "A person's note: answer in lower case.\n"


@pytest.fixture(scope="module")
def evolved_once(tmp_path_factory) -> Workspace:
    ws = scripted_workspace(tmp_path_factory.mktemp("evolved") / "ws")
    assert evolve_scripted(ws, rounds=1).decisions == ["accepted"]
    return ws


@pytest.fixture()
def evolved(evolved_once, tmp_path) -> Workspace:
    """A copy of `evolved_once` for the test to change."""
    shutil.copytree(evolved_once.root, tmp_path / "ws")
    return Workspace(tmp_path / "ws")


def edit_by_hand(ws: Workspace) -> None:
    path = ws.root / SKILL
    path.write_text(path.read_text() + NOTE)


def commit_by_hand(ws: Workspace, subject: str) -> str:
    edit_by_hand(ws)
    git(ws.root, "-c", "user.name=A Person", "-c", "user.email=person@example.invalid", "commit", "-qam", subject)
    return git(ws.root, "rev-parse", "HEAD").strip()


def assert_audit_is_sound(ws: Workspace) -> None:
    model = WorldModel(ScriptedWorld())
    assert api.audit(ws, options=RunOptions(model_factory=lambda role: model)).problems == []


def test_rollback_by_name_reverts_a_hand_commit_too_and_names_it(evolved):
    ws = evolved
    mine = commit_by_hand(ws, "my tweak of spell-letters")
    result = api.rollback(ws, "spell-letters")
    assert [c.meta.round for c in result.reverted] == [1] and [c.sha for c in result.human_edits] == [mine]
    assert ws.log(MAIN)[0].parents == (mine,)  # one commit
    assert not (ws.root / "skills/spell-letters").exists()
    body = git(ws.root, "log", "-1", "--format=%B")
    assert f"{mine[:10]} my tweak of spell-letters" in body
    assert git(ws.root, "status", "--porcelain") == "" and accepted_merges(ws) == []
    assert_audit_is_sound(ws)


def test_rollback_by_name_removes_a_file_a_person_added_to_the_skill_and_names_it(evolved):
    ws = evolved
    (ws.root / "skills/spell-letters/examples.md").write_text("reversed: olleh\n", encoding="utf-8")
    git(ws.root, "add", "skills/spell-letters/examples.md")
    person = ["-c", "user.name=A Person", "-c", "user.email=person@example.invalid"]
    git(ws.root, *person, "commit", "-qm", "examples for spell-letters")
    mine = git(ws.root, "rev-parse", "HEAD").strip()
    result = api.rollback(ws, "spell-letters")
    assert [c.sha for c in result.human_edits] == [mine]
    assert not (ws.root / "skills/spell-letters").exists() and not ws.list_paths(MAIN, "skills/spell-letters")
    body = git(ws.root, "log", "-1", "--format=%B")
    assert f"{mine[:10]} examples for spell-letters" in body
    assert git(ws.root, "status", "--porcelain") == ""
    assert_audit_is_sound(ws)


def test_rollback_by_name_reverts_edits_committed_by_evolve_commit_human_edits_too(evolved):
    ws = evolved
    edit_by_hand(ws)
    evolve_scripted(ws, rounds=1, commit_human_edits=True)
    human = next(c for c in ws.log(MAIN) if c.meta.step == Step.HUMAN)
    result = api.rollback(ws, "spell-letters")
    assert [c.sha for c in result.human_edits] == [human.sha]
    assert not (ws.root / "skills/spell-letters").exists()
    assert human.sha[:10] in git(ws.root, "log", "-1", "--format=%B")
    assert git(ws.root, "status", "--porcelain") == ""
    assert_audit_is_sound(ws)
    assert evolve_scripted(ws, rounds=1).rounds_completed == 3  # evolve carries on after it


def test_keep_human_edits_refuses_an_edit_that_builds_on_the_change_naming_the_command_that_works(evolved):
    ws = evolved
    commit_by_hand(ws, "my tweak of spell-letters")
    head = ws.head()
    result = CliRunner().invoke(app, ["-C", str(ws.root), "rollback", "spell-letters", "--keep-human-edits"])
    assert result.exit_code == 1
    assert "`wikiskill rollback spell-letters` reverts every change of spell-letters" in result.output
    assert ws.head() == head and git(ws.root, "status", "--porcelain") == ""
    named = re.search(r"`wikiskill (rollback [^`]*)`", result.output).group(1).split()
    done = CliRunner().invoke(app, ["-C", str(ws.root), *named])
    assert done.exit_code == 0, done.output
    assert "and 1 hand edit(s) of it" in done.output and not (ws.root / "skills/spell-letters").exists()


def test_keep_human_edits_keeps_a_hand_edit_the_revert_can_be_separated_from(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    merge_change(ws, "spell-letters", 2, "CREATED")
    merge_change(ws, "spell-letters", 3, "PATCHED")
    path = ws.root / SKILL
    path.write_text(path.read_text().replace("A question asks", "A question (any language) asks"))
    git(ws.root, "-c", "user.name=A Person", "-c", "user.email=person@example.invalid", "commit", "-qam", "mine")
    with pytest.raises(WorkspaceError, match=r"round 2 .*`wikiskill rollback spell-letters`"):
        api.rollback(ws, "spell-letters", keep_human_edits=True)  # round 2 created the file the edit is in
    result = api.rollback(ws, round_number=3)
    assert result.human_edits == []
    assert path.read_text() == skill_md("spell-letters", "CREATED").replace(
        "A question asks", "A question (any language) asks"
    )


def test_every_refusal_of_rollback_names_a_command(evolved):
    ws = evolved

    def refusal(*args: str) -> str:
        result = CliRunner().invoke(app, ["-C", str(ws.root), "rollback", *args])
        assert result.exit_code == 1, result.output
        return result.output

    assert "`wikiskill rollback NAME`" in refusal()
    assert "`wikiskill skills`" in refusal("no-such-skill")
    assert "`wikiskill log`" in refusal("--round", "7")
    (ws.root / "skills/mine").mkdir()
    (ws.root / "skills/mine/SKILL.md").write_text(skill_md("mine", "MINE"))
    git(ws.root, "add", "skills/mine")
    git(ws.root, "-c", "user.name=A Person", "-c", "user.email=person@example.invalid", "commit", "-qm", "my skill")
    mine = git(ws.root, "rev-parse", "HEAD").strip()
    assert f"`git revert {mine[:10]}`" in refusal("mine")  # a skill made by hand has no accepted change
