"""What a command that runs tasks takes beside its own arguments: a split by name, refused in one
line naming the splits there are, and overrides that change only this run's settings."""

import pytest
import yaml

from wikiskill import api
from wikiskill.api.command import overridden
from wikiskill.core.errors import WikiskillError
from wikiskill.roles.settings import Role
from workspaces import new_workspace


def test_an_unknown_split_is_refused_naming_the_splits_there_are(tmp_path):
    with pytest.raises(WikiskillError, match="unknown split 'dev': use val, test or train"):
        api.evaluate(new_workspace(tmp_path), "dev")


def test_a_runs_overrides_change_its_settings_and_leave_wikiskill_yaml_as_it_was(tmp_path):
    ws = new_workspace(tmp_path)
    before = (ws.root / "wikiskill.yaml").read_text()
    config = overridden(ws, api.RunOptions(model="openai/other", concurrency=7))
    assert (config.concurrency, config.role(Role.AGENT).model) == (7, "openai/other")
    assert (ws.root / "wikiskill.yaml").read_text() == before
    assert yaml.safe_load(before)["concurrency"] != 7
