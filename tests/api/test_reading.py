"""Reading a workspace through the library API: a skill shown whole with its purpose, the skills
and the prompt block at any ref (an unknown ref or skill refused in one line), the prompt in the
mode asked for, and a broken wikiskill.yaml refused before the log or a report is made from it."""

import pytest

from wikiskill import api
from wikiskill.core.errors import ConfigError, WikiskillError, WorkspaceError
from wikiskill.store.workspace import MAIN
from workspaces import commit_skills, new_workspace, skill_md


def test_a_skill_is_shown_with_its_purpose_after_a_separator(tmp_path):
    ws = new_workspace(tmp_path)
    commit_skills(ws, ["spell-letters"])
    shown = api.show_skill(ws, "spell-letters")
    skill, _, purpose = shown.partition("\n---- PURPOSE.md ----\n")
    assert skill == skill_md("spell-letters")
    assert purpose.startswith("# spell-letters\n\n## Evolution History\n- r001 created")


def test_a_skill_absent_at_the_ref_is_refused_naming_the_skill_and_the_ref(tmp_path):
    ws = new_workspace(tmp_path)
    before = ws.head(MAIN)
    commit_skills(ws, ["spell-letters"])
    with pytest.raises(WikiskillError, match=f"^no skill named 'spell-letters' at {before}$"):
        api.show_skill(ws, "spell-letters", before)
    with pytest.raises(WikiskillError, match="^no skill named 'convert-units' at main$"):
        api.show_skill(ws, "convert-units")


def test_the_skills_and_their_prompt_block_are_read_at_the_ref_asked_for(tmp_path):
    ws = new_workspace(tmp_path)
    before = ws.head(MAIN)
    commit_skills(ws, ["spell-letters", "convert-units"])
    assert sorted(skill.name for skill in api.load_skills(ws)) == ["convert-units", "spell-letters"]
    assert api.load_skills(ws, before) == [] and api.prompt(ws, ref=before) == ""
    assert "spell-letters" in api.prompt(ws) and "convert-units" in api.prompt(ws)


@pytest.mark.parametrize("read", [api.load_skills, api.prompt, api.skill_usage])
def test_an_unknown_ref_is_refused_in_one_line(tmp_path, read):
    ws = new_workspace(tmp_path)
    commit_skills(ws, ["spell-letters"])
    with pytest.raises(WorkspaceError, match="^unknown git ref 'no-such-branch'$"):
        read(ws, ref="no-such-branch")


def test_a_search_at_an_unknown_ref_is_refused_before_anything_is_read(tmp_path):
    ws = new_workspace(tmp_path)
    with pytest.raises(WorkspaceError, match="^unknown git ref 'no-such-branch'$"):
        api.search(ws, "letters", "skills", "no-such-branch")


def test_the_prompt_takes_the_mode_asked_for_over_the_workspaces(tmp_path):
    ws = new_workspace(tmp_path)
    commit_skills(ws, ["spell-letters"])
    instructions = "Follow the spell-letters steps carefully."
    assert instructions in api.prompt(ws)  # the workspace's mode, full: every skill whole
    index = api.prompt(ws, mode="index")
    assert "spell-letters" in index and instructions not in index
    with pytest.raises(ConfigError, match="^unknown skills mode 'everything': use full, index or retrieve$"):
        api.prompt(ws, mode="everything")


@pytest.mark.parametrize("read", ["round_log", "report"])
def test_a_broken_settings_file_is_refused_before_the_log_or_a_report_is_made(tmp_path, read):
    ws = new_workspace(tmp_path)
    (ws.root / "wikiskill.yaml").write_text("gate:\n  policy: [strict\n")
    out = tmp_path / "report.html"
    with pytest.raises(ConfigError, match="wikiskill.yaml"):
        api.round_log(ws) if read == "round_log" else api.report(ws, out)
    assert not out.exists()
