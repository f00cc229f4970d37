"""Every command that runs tasks starts one way (`command_session`): its settings checked by the
pre-flight before anything is held or loaded, then the workspace held and what a killed writer left
finished, then the suite loaded, and the harness closed on the way out."""

from contextlib import contextmanager

import pytest

from wikiskill.api import RunOptions
from wikiskill.api.command import command_session
from wikiskill.core.errors import ConfigError, WorkspaceError
from wikiskill.store.workspace import TEMP_INDEX_PREFIX
from workspaces import new_workspace


@contextmanager
def noted(events: list[str]):
    events.append("held")
    yield


def test_a_command_the_preflight_refuses_holds_nothing_and_loads_no_suite(tmp_path):
    ws = new_workspace(tmp_path)
    events: list[str] = []
    options = RunOptions(agent="python:no_such_module_here:play")
    with pytest.raises(ConfigError, match="no_such_module_here"):
        with command_session(ws, options, "eval", held=noted(events)):
            events.append("loaded")
    assert events == []


def test_a_command_that_writes_finishes_what_a_killed_writer_left_and_holds_the_lock_while_it_runs(tmp_path):
    ws = new_workspace(tmp_path)
    leftover = ws.state_dir / f"{TEMP_INDEX_PREFIX}killed"
    leftover.write_text("")
    with command_session(ws, RunOptions(), "accept", held=ws.writing("wikiskill accept"), traced=False) as harness:
        assert not leftover.exists()
        assert harness.benchmark.tasks("val")
        with pytest.raises(WorkspaceError, match=r"busy: pid \d+ \(wikiskill accept\)"):
            with ws.lock("wikiskill reject"):
                pass
    with ws.lock("wikiskill reject"):  # given back on the way out
        pass
