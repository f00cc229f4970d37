"""The commands that run tasks refuse what their own arguments get wrong before the suite loads:
a suite that cannot load is never what such a mistake is reported as."""

import pytest
import yaml

from wikiskill import api
from wikiskill.core.errors import BenchmarkError, WikiskillError, WorkspaceError
from workspaces import new_workspace


@pytest.fixture()
def unloadable(tmp_path):
    """A workspace whose suite's folder is gone: loading it fails, reading its settings does not."""
    ws = new_workspace(tmp_path)
    settings = yaml.safe_load((ws.root / "wikiskill.yaml").read_text())
    settings["benchmark"] = f"jsonl:{tmp_path / 'gone'}"
    (ws.root / "wikiskill.yaml").write_text(yaml.safe_dump(settings))
    return ws


def test_an_unknown_uplift_arm_is_refused_before_the_suite_loads(tmp_path, unloadable):
    with pytest.raises(WikiskillError, match="unknown uplift arm 'bogus'"):
        api.uplift(unloadable, arms=["main", "bogus"])
    with pytest.raises(BenchmarkError):
        api.uplift(unloadable, arms=["main"])


def test_eval_of_an_unknown_ref_is_refused_before_the_suite_loads(tmp_path, unloadable):
    with pytest.raises(WorkspaceError, match="unknown git ref 'nope'"):
        api.evaluate(unloadable, "val", ref="nope")
    with pytest.raises(BenchmarkError):
        api.evaluate(unloadable, "val")
