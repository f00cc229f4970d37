"""A task container's network per phase (`environments/network.py`): one whose phases differ
starts on the bridge and is cut off for the phase without the network and connected again for the
one with it; one whose phases agree starts as they say and is never switched. The engine here is a
script behind the real `Runtime` that plays `docker network` on one container and logs each call:
this machine's engine may have no bridge, and the switching is what is under test."""

import asyncio
import stat
from pathlib import Path

import pytest

from wikiskill.benchmarks.harbor import HarborTaskConfig
from wikiskill.benchmarks.harbor_network import Phase
from wikiskill.core.errors import InfrastructureError
from wikiskill.environments.network import BRIDGE, HOST, NONE, EngineNetwork
from wikiskill.environments.runtime import Runtime
from wikiskill.environments.settings import ContainerRuntime

ENGINE = """#!/bin/sh
cd "$(dirname "$0")"
echo "$*" >> calls.log
case "$*" in
  "network inspect bridge") exit 0 ;;
  "network connect bridge box")
    [ -f connected ] && { echo "endpoint with name box already exists in network bridge" >&2; exit 1; }
    touch connected ;;
  "network disconnect bridge box")
    [ -f connected ] || { echo "container box is not connected to network bridge" >&2; exit 1; }
    rm connected ;;
  *) echo "Error: No such container: ${4:-?}" >&2; exit 1 ;;
esac
"""
OFFLINE, ONLINE = {"network_mode": "no-network"}, {"network_mode": "public"}


class Engine:
    """The script engine in `folder`: one container, `box`, on the bridge or not."""

    def __init__(self, folder: Path):
        self.folder = folder
        script = folder / "docker"
        script.write_text(ENGINE)
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
        self.network = EngineNetwork(Runtime(ContainerRuntime.DOCKER, str(script)))

    def start(self, config: HarborTaskConfig) -> str:
        """`docker run --network <what the network says>` of `box`."""
        network = self.network.start_network(config)
        if network == BRIDGE:
            (self.folder / "connected").touch()
        return network

    def enter(self, config: HarborTaskConfig, phase: Phase) -> bool:
        """Enter `phase`; whether `box` is on the bridge after it."""
        asyncio.run(self.network.enter("box", config, phase))
        return (self.folder / "connected").exists()

    def switches(self) -> list[str]:
        log = self.folder / "calls.log"
        calls = log.read_text().splitlines() if log.exists() else []
        return [call for call in calls if call.startswith(("network connect", "network disconnect"))]


def config(agent: dict, verifier: dict) -> HarborTaskConfig:
    return HarborTaskConfig.model_validate({"agent": agent, "verifier": verifier})


def test_an_offline_agent_is_cut_off_the_bridge_and_an_online_verifier_connected_again(tmp_path):
    engine, task = Engine(tmp_path), config(OFFLINE, ONLINE)
    assert engine.start(task) == BRIDGE
    assert engine.enter(task, Phase.AGENT) is False
    assert engine.enter(task, Phase.VERIFIER) is True
    assert engine.switches() == ["network disconnect bridge box", "network connect bridge box"]


def test_an_online_agent_keeps_the_bridge_and_an_offline_verifier_is_cut_off(tmp_path):
    engine, task = Engine(tmp_path), config(ONLINE, OFFLINE)
    assert engine.start(task) == BRIDGE
    assert engine.enter(task, Phase.AGENT) is True  # already on it: the engine's refusal is no failure
    assert engine.enter(task, Phase.VERIFIER) is False
    assert engine.switches() == ["network connect bridge box", "network disconnect bridge box"]


@pytest.mark.parametrize(
    ("agent", "verifier", "started"), [(OFFLINE, OFFLINE, NONE), (ONLINE, ONLINE, BRIDGE)], ids=["offline", "online"]
)
def test_phases_that_agree_start_as_they_say_and_are_never_switched(tmp_path, agent, verifier, started):
    engine, task = Engine(tmp_path), config(agent, verifier)
    assert engine.start(task) == started
    assert [engine.enter(task, phase) for phase in Phase] == [started == BRIDGE] * 2
    assert engine.switches() == []


def test_on_the_hosts_network_no_phase_is_switched(tmp_path):
    engine = Engine(tmp_path)
    engine.network = EngineNetwork(engine.network.runtime, host_network=True)
    task = config(OFFLINE, ONLINE)
    assert engine.network.start_network(task) == HOST
    for phase in Phase:
        asyncio.run(engine.network.enter("box", task, phase))
    assert engine.switches() == []


def test_a_switch_the_engine_refuses_is_an_infrastructure_failure_naming_the_phase(tmp_path):
    engine, task = Engine(tmp_path), config(OFFLINE, ONLINE)
    with pytest.raises(
        InfrastructureError,
        match="cannot disconnect container gone from the bridge network for the agent phase: Error: No such container",
    ):
        asyncio.run(engine.network.enter("gone", task, Phase.AGENT))


def test_entering_a_phase_the_container_is_already_in_is_no_failure(tmp_path):
    engine, task = Engine(tmp_path), config(OFFLINE, ONLINE)
    engine.start(task)
    assert [engine.enter(task, phase) for phase in (Phase.AGENT, Phase.AGENT, Phase.VERIFIER, Phase.VERIFIER)] == [
        False,
        False,
        True,
        True,
    ]


def without_bridge(folder: Path) -> EngineNetwork:
    """An engine whose `docker network inspect bridge` fails, as with dockerd `--bridge=none`."""
    script = folder / "docker"
    script.write_text('#!/bin/sh\necho "$*" >> "$(dirname "$0")/calls.log"\nexit 1\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return EngineNetwork(Runtime(ContainerRuntime.DOCKER, str(script)))


def test_a_phase_that_needs_the_network_on_an_engine_without_a_bridge_is_refused_naming_it(tmp_path):
    network = without_bridge(tmp_path)
    assert network.refusal("t", config(OFFLINE, OFFLINE)) is None
    said = (
        "t: its verifier phase needs the network (public); this engine has no bridge network "
        "(docker runs with --bridge=none)"
    )
    assert network.refusal("t", config(OFFLINE, ONLINE)) == said
    with pytest.raises(InfrastructureError) as raised:
        network.check("t", config(OFFLINE, ONLINE))
    assert str(raised.value) == said
    network.check("t", config(OFFLINE, OFFLINE))
    assert (tmp_path / "calls.log").read_text().splitlines() == ["network inspect bridge"]  # asked once


def test_an_allowlist_is_refused_on_any_engine_and_nothing_is_refused_on_the_hosts_network(tmp_path):
    allowlist = {"network_mode": "allowlist", "allowed_hosts": ["pypi.org", "10.0.0.1"]}
    network = Engine(tmp_path).network
    assert network.refusal("t", config(allowlist, OFFLINE)) == (
        "t: its agent phase allows only pypi.org, 10.0.0.1; wikiskill cannot enforce an allowlist on docker "
        "(it would be the whole network or none)"
    )
    assert network.refusal("t", config(ONLINE, OFFLINE)) is None  # this engine has a bridge
    hosted = EngineNetwork(without_bridge(tmp_path).runtime, host_network=True)
    assert hosted.refusal("t", config(allowlist, ONLINE)) is None


def test_a_refused_switch_names_the_short_container_id_the_direction_and_the_engine_s_first_300_characters(tmp_path):
    engine, task = Engine(tmp_path), config(OFFLINE, ONLINE)
    long_id = "0123456789abcdef" * 4
    with pytest.raises(InfrastructureError) as raised:
        asyncio.run(engine.network.enter(long_id, task, Phase.VERIFIER))
    said = f"Error: No such container: {long_id}"
    assert str(raised.value) == (
        f"cannot connect container 0123456789ab to the bridge network for the verifier phase: {said}"
    )
    (tmp_path / "docker").write_text("#!/bin/sh\nprintf '%0400d' 0 >&2\nexit 1\n")
    with pytest.raises(InfrastructureError) as raised:
        asyncio.run(engine.network.enter("box", task, Phase.AGENT))
    said = f"cannot disconnect container box from the bridge network for the agent phase: {'0' * 300}"
    assert str(raised.value) == said
    (tmp_path / "docker").write_text("#!/bin/sh\nexit 1\n")
    with pytest.raises(InfrastructureError) as raised:
        asyncio.run(engine.network.enter("box", task, Phase.AGENT))
    assert str(raised.value) == "cannot disconnect container box from the bridge network for the agent phase: "
