"""The team plays each task where its suite says, never by the suite's class: a suite of containers
of any family has each task played in a container of its own and verified there."""

import asyncio
from pathlib import Path

import pytest

from conftest import needs_docker
from harborsuites import remove_images, tag_of, write_harbor_task
from wikiskill.benchmarks.harbor import ContainerSuite, HarborSuite
from wikiskill.core.config import Config
from wikiskill.llm.meter import Meter
from wikiskill.roles.settings import AgentSettings
from wikiskill.run.team import Team


class FamilyOfItsOwn:
    """A second family of container suites: its own class, no HarborSuite, reading Harbor task
    folders with the members a suite of containers has."""

    def __init__(self, folder: Path):
        self._folders = HarborSuite(folder)
        self.name = f"words-in-boxes:{folder}"

    def __getattr__(self, name: str) -> object:
        return getattr(self._folders, name)


@pytest.fixture()
def word_task(tmp_path):
    task = write_harbor_task(tmp_path / "suite", "rev-cat", "cat", nonce=tmp_path.name)
    yield task
    remove_images([tag_of(task)])


def test_a_suite_of_another_family_with_the_members_of_a_suite_of_containers_is_one(tmp_path, word_task):
    assert isinstance(FamilyOfItsOwn(word_task.parent), ContainerSuite)


@needs_docker
def test_a_second_family_of_container_suites_is_played_in_containers_the_oracle_one_and_nop_zero(tmp_path, word_task):
    suite = FamilyOfItsOwn(word_task.parent)
    scores = {}
    for runner in ("oracle", "nop"):
        config = Config(benchmark=f"harbor:{word_task.parent}", agent=AgentSettings(runner=runner))
        agent = Team(config, suite, Meter(), tmp_path / "state").agent([])
        scores[runner] = asyncio.run(agent.run(suite.as_task(suite.by_id["rev-cat"], "train"))).score
    assert scores == {"oracle": 1.0, "nop": 0.0}
