"""Setting a workspace up through the library API: `init` writes a checked wikiskill.yaml for the
suite it names, `open` finds the workspace from a folder inside it."""

import pytest
import yaml

from wikiskill import api
from wikiskill.core.errors import ConfigError
from workspaces import UNUSED_SERVER, new_workspace


def test_init_writes_the_suite_and_model_it_is_given_and_open_finds_it_from_inside(tmp_path):
    ws = new_workspace(tmp_path)
    settings = yaml.safe_load((ws.root / "wikiskill.yaml").read_text())
    assert settings["benchmark"] == "example-qa"
    assert api.open_workspace(ws.root / "skills").root == ws.root


def test_init_refuses_a_registry_for_a_suite_that_names_no_datasets_and_makes_no_folder(tmp_path):
    with pytest.raises(ConfigError, match="which example-qa does not take"):
        api.init_workspace(
            tmp_path / "ws", benchmark="example-qa", model="openai/m", api_base=UNUSED_SERVER, registry="r.json"
        )
    assert not (tmp_path / "ws").exists()
