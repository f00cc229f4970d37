"""A person's decisions hold the workspace as every writing command does: refused while another
command holds it, naming that command, and written only after what a killed writer left is
finished."""

import pytest

from wikiskill import api
from wikiskill.core.errors import WorkspaceError
from wikiskill.store.workspace import TEMP_INDEX_PREFIX
from workspaces import commit_skills, new_workspace


def test_a_decision_while_another_command_holds_the_workspace_is_refused_naming_it(tmp_path):
    ws = new_workspace(tmp_path)
    commit_skills(ws, ["spell-letters"])
    with ws.lock("wikiskill evolve"):
        with pytest.raises(WorkspaceError, match=r"busy: pid \d+ \(wikiskill evolve\)"):
            api.lock(ws, "spell-letters")
    assert api.lock(ws, "spell-letters") is not None


def test_locking_a_skill_first_finishes_what_a_killed_writer_left(tmp_path):
    ws = new_workspace(tmp_path)
    commit_skills(ws, ["spell-letters"])
    leftover = ws.state_dir / f"{TEMP_INDEX_PREFIX}killed"
    leftover.write_text("")
    assert api.lock(ws, "spell-letters") is not None
    assert not leftover.exists()
    assert api.unlock(ws, "spell-letters") is not None
