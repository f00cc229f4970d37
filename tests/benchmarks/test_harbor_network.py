"""A task.toml's network as Harbor's schema 1.4 reads it: the environment's baseline, each
phase's override, the older allow_internet, and the one-line refusal of a bad allowlist."""

import pytest

from harborsuites import write_harbor_task
from wikiskill.benchmarks.harbor import HarborTaskConfig, read_task
from wikiskill.benchmarks.harbor_env import exports, resolve_env
from wikiskill.benchmarks.harbor_network import NetworkMode, Phase
from wikiskill.core.errors import BenchmarkError, ConfigError


def modes(data: dict) -> tuple[str, str]:
    config = HarborTaskConfig.model_validate(data)
    return str(config.network(Phase.AGENT)), str(config.network(Phase.VERIFIER))


def test_an_unset_network_is_public_and_allow_internet_is_read_as_public_or_none():
    assert modes({}) == ("public", "public")
    assert modes({"environment": {"allow_internet": False}}) == ("no-network", "no-network")
    assert modes({"environment": {"allow_internet": True}}) == ("public", "public")
    assert modes({"environment": {"allow_internet": False, "network_mode": "public"}}) == ("public", "public")


def test_each_phase_overrides_the_baseline_and_hosts_alone_mean_an_allowlist():
    data = {
        "environment": {"network_mode": "no-network"},
        "agent": {"allowed_hosts": ["PyPI.org."]},
        "verifier": {"network_mode": "public"},
    }
    assert modes(data) == ("allowlist (pypi.org)", "public")
    closed = HarborTaskConfig.model_validate({"environment": {"network_mode": "allowlist"}})
    assert closed.network(Phase.AGENT).mode == NetworkMode.NO_NETWORK and not closed.needs_network


def test_an_allowlist_entry_that_is_a_url_is_refused_naming_the_file(tmp_path):
    toml = '[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["https://pypi.org/simple"]\n'
    folder = write_harbor_task(tmp_path, "bad-net", "net", toml=toml)
    with pytest.raises(BenchmarkError) as refused:
        read_task(folder)
    assert str(folder / "task.toml") in str(refused.value) and "is not a hostname" in str(refused.value)
    assert len(str(refused.value).splitlines()) == 1


def test_env_templates_are_filled_from_this_machine_and_an_unset_one_is_named(monkeypatch):
    monkeypatch.setenv("I37_TOKEN", "s3cret's")
    assert resolve_env({"A": "${I37_TOKEN}", "B": "${I37_NOT_SET:-dflt}", "C": "plain"}, "t") == {
        "A": "s3cret's",
        "B": "dflt",
        "C": "plain",
    }
    assert exports({"A": "s3cret's"}) == "export A='s3cret'\"'\"'s'; "
    with pytest.raises(ConfigError, match="I37_NOT_SET is not set on this machine"):
        resolve_env({"B": "${I37_NOT_SET}"}, "t: [verifier.env]")
