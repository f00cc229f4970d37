"""A Harbor verifier's reward files read as Harbor reads them: one number, or one key of
reward.json (the set key, else `reward`, else the only one), never a mean; anything else is an
infrastructure failure, never a score."""

import asyncio
import json
from pathlib import Path

import pytest

from conftest import needs_docker
from harborsuites import remove_images, tag_of, write_harbor_task
from wikiskill.benchmarks.harbor import HarborSuite
from wikiskill.benchmarks.harbor_reward import read_reward
from wikiskill.core.errors import ConfigError, InfrastructureError
from wikiskill.environments.settings import EnvironmentSettings
from wikiskill.roles.reference_agent import NopAgent, OracleAgent
from wikiskill.run.harbor_tasks import HarborTaskAgent, open_setup
from wikiskill.store.traces import Trajectory


def logs(tmp_path: Path, name: str, content: object) -> Path:
    text = content if isinstance(content, str) else json.dumps(content)
    (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("rewards", "key", "expected"),
    [
        ({"reward": 0, "checks": 3}, None, 0.0),
        ({"reward": 1, "checks": 3, "passed": 3}, None, 1.0),
        ({"accuracy": 0.25}, None, 0.25),
        ({"accuracy": 0.25, "passed": 7}, "accuracy", 0.25),
        ({"reward": 0.5, "accuracy": 1}, "accuracy", 1.0),
    ],
)
def test_reward_json_gives_the_set_key_else_reward_else_its_only_key(tmp_path, rewards, key, expected):
    assert read_reward(logs(tmp_path, "reward.json", rewards), key, "t") == expected


def test_a_count_beside_the_reward_never_lifts_a_failed_task(tmp_path):
    assert read_reward(logs(tmp_path, "reward.json", {"reward": 0, "checks": 3}), None, "t") == 0.0


def test_several_keys_and_none_named_reward_is_infra_naming_the_keys(tmp_path):
    with pytest.raises(InfrastructureError, match=r"several keys \(accuracy, checks\) and none named 'reward'"):
        read_reward(logs(tmp_path, "reward.json", {"checks": 3, "accuracy": 0.5}), None, "t")


def test_a_set_key_that_reward_json_lacks_stops_the_command_naming_its_keys(tmp_path):
    with pytest.raises(ConfigError, match=r"harbor.reward_key 'score' .* \(its keys: checks, reward\)"):
        read_reward(logs(tmp_path, "reward.json", {"reward": 1, "checks": 3}), "score", "t")


@pytest.mark.parametrize(
    ("name", "content"),
    [("reward.txt", "1.5"), ("reward.txt", "-1"), ("reward.txt", "nan"), ("reward.json", {"reward": 3})],
)
def test_a_reward_outside_zero_to_one_is_infra_never_clamped(tmp_path, name, content):
    with pytest.raises(InfrastructureError, match=r"outside \[0, 1\]"):
        read_reward(logs(tmp_path, name, content), None, "t")


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("reward.txt", "passed", "holds no number"),
        ("reward.json", "{not json", "is not JSON"),
        ("reward.json", [1], "not a map"),
        ("reward.json", {"reward": "high"}, "is no number"),
        ("reward.json", {"reward": True}, "is no number"),
    ],
)
def test_a_reward_that_reads_as_no_number_is_infra(tmp_path, name, content, says):
    with pytest.raises(InfrastructureError, match=says):
        read_reward(logs(tmp_path, name, content), None, "t")


def test_reward_txt_is_a_number_with_white_space_around_it(tmp_path):
    assert read_reward(logs(tmp_path, "reward.txt", " 0.75\n"), None, "t") == 0.75


def test_no_reward_file_is_infra(tmp_path):
    with pytest.raises(InfrastructureError, match="wrote no reward.txt or reward.json"):
        read_reward(tmp_path, None, "t")


@pytest.mark.parametrize(
    ("name", "says"),
    [("reward.txt", "reward.txt holds no number ('\ufffd1')"), ("reward.json", "reward.json is not JSON")],
)
def test_a_reward_file_that_is_not_utf_8_is_infra_naming_the_task_not_a_crash(tmp_path, name, says):
    (tmp_path / name).write_bytes(b"\xff1")
    with pytest.raises(InfrastructureError, match=r"^t-1: the verifier's ") as raised:
        read_reward(tmp_path, None, "t-1")
    assert says in str(raised.value)


def test_a_long_reward_txt_that_is_no_number_is_shown_to_its_first_80_characters(tmp_path):
    with pytest.raises(InfrastructureError) as raised:
        read_reward(logs(tmp_path, "reward.txt", "x" * 200), None, "t")
    assert str(raised.value) == f"t: the verifier's reward.txt holds no number ({'x' * 80!r})"


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("reward.txt", "1.5", "t: the verifier's reward 1.5 (reward.txt) is outside [0, 1]"),
        ("reward.json", {"reward": 3}, "t: the verifier's reward 3 (reward.json key 'reward') is outside [0, 1]"),
        ("reward.json", {"reward": "high"}, "t: the verifier's reward.json key 'reward' is no number ('high')"),
    ],
)
def test_a_reward_that_is_no_score_names_the_task_and_the_file_it_came_from(tmp_path, name, content, says):
    with pytest.raises(InfrastructureError) as raised:
        read_reward(logs(tmp_path, name, content), None, "t")
    assert str(raised.value) == says


def json_verifier(task: Path, right: str, wrong: str) -> None:
    """test.sh writing reward.json as published suites do: `right` when the answer is there, else `wrong`."""
    (task / "tests" / "test.sh").write_text(
        "#!/bin/bash\nmkdir -p /logs/verifier\n"
        f"if [ \"$(cat /app/answer.txt 2>/dev/null)\" = tac ]; then echo '{right}' > /logs/verifier/reward.json\n"
        f"else echo 'FAILED 3 checks' >&2; echo '{wrong}' > /logs/verifier/reward.json; fi\n"
    )


@pytest.fixture()
def word_task(tmp_path):
    task = write_harbor_task(tmp_path / "suite", "rev-cat", "cat", nonce=tmp_path.name)
    yield task
    remove_images([tag_of(task)])


@needs_docker
def test_in_a_container_a_reward_json_with_a_count_scores_nothing_done_zero_and_the_solution_one(tmp_path, word_task):
    json_verifier(word_task, '{"reward": 1, "checks": 3}', '{"reward": 0, "checks": 3}')
    assert play(tmp_path, word_task, NopAgent()).score == 0.0
    assert play(tmp_path, word_task, OracleAgent()).score == 1.0


@needs_docker
def test_in_a_container_a_reward_json_of_counts_only_is_infra_naming_its_keys(tmp_path, word_task):
    json_verifier(word_task, '{"passed": 3, "total": 3}', '{"passed": 0, "total": 3}')
    with pytest.raises(InfrastructureError, match=r"several keys \(passed, total\)"):
        play(tmp_path, word_task, NopAgent())


def play(tmp_path: Path, task: Path, agent) -> Trajectory:
    suite = HarborSuite(task.parent)
    setup = open_setup(EnvironmentSettings(), tmp_path / "state", workspace=tmp_path)
    return asyncio.run(HarborTaskAgent(agent, suite, setup).run(suite.as_task(suite.by_id[task.name], "train")))
