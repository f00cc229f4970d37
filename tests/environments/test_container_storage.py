"""A Harbor task's `storage_mb` in a real container: where the engine cannot limit a container's
disk (overlay2 off xfs-with-pquota, as on most machines), a task whose agent or verifier writes
past the limit fails with the reason, one within it scores as its verifier says, and the user is
warned once per command; where the engine can, the write itself runs out of room."""

import asyncio
import logging
import uuid

import pytest

from conftest import needs_docker
from harborsuites import containers_of, remove_images, tag_of, write_harbor_task
from wikiskill.benchmarks.harbor import HarborSuite
from wikiskill.environments.settings import EnvironmentSettings
from wikiskill.roles.reference_agent import OracleAgent
from wikiskill.run.harbor_tasks import HarborTaskAgent, open_setup

WRITE_20_MB = "head -c 20M /dev/zero > /app/big.bin"
WARNING = "cannot limit a container's disk"


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """Three tasks of one image: an oracle that writes 20 MB under an 8 MB limit (its verifier
    writes no reward), one that writes its answer under 64 MB, and a verifier that writes 20 MB
    under 8 MB."""
    root = tmp_path_factory.mktemp("storage") / "suite"
    nonce = uuid.uuid4().hex
    hungry = write_harbor_task(root, "agent-fills", "cat", nonce=nonce, storage_mb=8)
    (hungry / "solution" / "solve.sh").write_text(f"#!/bin/bash\n{WRITE_20_MB} && printf tac > /app/answer.txt\n")
    (hungry / "tests" / "test.sh").write_text("#!/bin/bash\necho had it run, it would write no reward: infra\n")
    write_harbor_task(root, "fits", "dog", nonce=nonce, storage_mb=64)
    verifier = write_harbor_task(root, "verifier-fills", "owl", nonce=nonce, storage_mb=8)
    test_sh = verifier / "tests" / "test.sh"
    test_sh.write_text(test_sh.read_text().replace("mkdir -p /logs/verifier\n", f"{WRITE_20_MB}\n"))
    yield root
    remove_images([tag_of(hungry)])


def play(tmp_path, suite_dir, *task_ids):
    """The tasks played at once by the oracle through one container setup: the setup and the
    trajectories."""
    suite = HarborSuite(suite_dir)
    setup = open_setup(EnvironmentSettings(), tmp_path / "state", workspace=tmp_path)
    agent = HarborTaskAgent(OracleAgent(), suite, setup)

    async def all_at_once():
        return await asyncio.gather(*(agent.run(suite.as_task(suite.by_id[task], "train")) for task in task_ids))

    played = asyncio.run(all_at_once())
    assert containers_of(tmp_path) == []
    return setup, played


@needs_docker
def test_an_agent_that_writes_past_storage_mb_fails_the_task_before_its_verifier_runs(tmp_path, suite):
    setup, (trajectory,) = play(tmp_path, suite, "agent-fills")
    assert trajectory.score == 0.0 and trajectory.failure is None
    if setup.storage.enforced:
        assert "No space left" in trajectory.error
    else:
        assert trajectory.error == "the task's container used 20 MB of disk, over its storage_mb of 8 MB"
        assert trajectory.feedback == trajectory.error  # no verifier output: it never ran


@pytest.mark.slow
@needs_docker
def test_a_task_within_storage_mb_scores_and_one_past_it_in_its_verifier_fails_warned_once(tmp_path, suite, caplog):
    with caplog.at_level(logging.WARNING, logger="wikiskill.environments.storage"):
        setup, (fits, verifier) = play(tmp_path, suite, "fits", "verifier-fills")
    assert fits.score == 1.0 and fits.error is None
    assert verifier.score == 0.0 and verifier.failure is None
    warnings = [record.getMessage() for record in caplog.records if WARNING in record.getMessage()]
    if setup.storage.enforced:
        assert warnings == []
    else:
        assert verifier.error == "the task's container used 20 MB of disk, over its storage_mb of 8 MB"
        assert verifier.feedback == verifier.error
        assert len(warnings) == 1 and "storage_mb is checked after its agent and its verifier" in warnings[0]
