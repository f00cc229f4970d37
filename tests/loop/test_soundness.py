"""Sound before spent: `evolve` on a Harbor suite first checks each task's reference solution
(it must score 1, doing nothing 0), once per task digest, and leaves an unsound task out of every
split with the reason, committed on main and shown by `status`, `show` and the report; with
`harbor.require_sound: false` every task stays."""

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from conftest import needs_docker
from harborsuites import IDS, harbor_suite, init_harbor, keep_verdicts, remove_images, tag_of
from scripted import ScriptedWorld
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.benchmarks.harbor import HarborSuite
from wikiskill.benchmarks.settings import HarborIds, HarborSettings
from wikiskill.benchmarks.task_folders import CrashRule
from wikiskill.environments.settings import EnvironmentSettings
from wikiskill.history.htmlreport import report_data
from wikiskill.history.roundstory import round_story
from wikiskill.history.status import status
from wikiskill.run.harbor_tasks import open_setup
from wikiskill.run.soundness import VERDICTS_FILE, Verdict, Verdicts, task_digest, unsound_tasks
from wikiskill.store.unsound import UNSOUND_PATH
from wikiskill.testing.fakeserver import FakeOpenAIServer

WRONG_SOLUTION = "#!/bin/bash\nprintf %s nope > /app/answer.txt\n"


@pytest.fixture()
def suite(tmp_path):
    suite = harbor_suite(tmp_path)
    (suite / "rev-owl" / "solution" / "solve.sh").write_text(WRONG_SOLUTION)
    yield suite
    remove_images([tag_of(suite / "rev-cat")])


def workspace(tmp_path, suite, base_url, **harbor):
    ws = tmp_path / "ws"
    assert init_harbor(ws, suite, base_url).exit_code == 0
    config = yaml.safe_load((ws / "wikiskill.yaml").read_text())
    config.update({"harbor": {"ids": IDS, **harbor}, "proposer": {"min_trace_reads": 2}})
    (ws / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    return api.open_workspace(ws)


@pytest.mark.slow
@needs_docker
def test_evolve_leaves_a_task_whose_solution_fails_out_of_every_split_and_says_why(tmp_path, suite):
    with FakeOpenAIServer(ScriptedWorld(trace_ids=IDS["train"])) as server:
        ws = workspace(tmp_path, suite, server.base_url)
        api.evolve(ws, 1, RunOptions(agent="nop"))
    recorded = json.loads((ws.root / UNSOUND_PATH).read_text())
    assert list(recorded) == ["rev-owl"] and "they scored 0 and 0" in recorded["rev-owl"]
    baseline = [
        json.loads(line)["id"] for line in (ws.root / "raw" / "baseline" / "val.jsonl").read_text().splitlines()
    ]
    assert baseline == ["rev-emu"]
    assert status(ws).unsound == recorded and round_story(ws, 1).unsound == recorded
    assert report_data(ws).status.unsound == recorded
    verdicts = json.loads((ws.state_dir / VERDICTS_FILE).read_text())
    assert len(verdicts) == 4 and sum(not verdict["sound"] for verdict in verdicts.values()) == 1
    evaluated = api.evaluate(ws, "val", ref="main", options=RunOptions(agent="nop"))  # as evolve left the split
    assert [trajectory.task_id for trajectory in evaluated.runs[0]] == ["rev-emu"]


@needs_docker
def test_a_verdict_is_kept_by_task_digest_and_an_edited_task_is_checked_again(tmp_path, suite, monkeypatch):
    two = HarborSettings(ids=HarborIds(train=["rev-cat"], val=["rev-owl"]))
    harbor = HarborSuite(suite, two)
    setup = open_setup(EnvironmentSettings(), tmp_path / "state", workspace=tmp_path)
    first = unsound_tasks(harbor, setup, tmp_path / "state")
    assert list(first) == ["rev-owl"]
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")  # a check now would fail as infra
    assert unsound_tasks(harbor, setup, tmp_path / "state") == first
    monkeypatch.delenv("DOCKER_HOST")
    (suite / "rev-owl" / "solution" / "solve.sh").write_text("#!/bin/bash\nprintf %s lwo > /app/answer.txt\n")
    assert unsound_tasks(HarborSuite(suite, two), setup, tmp_path / "state") == {}
    assert len(json.loads((tmp_path / "state" / VERDICTS_FILE).read_text())) == 3


@needs_docker
def test_a_check_the_machine_failed_keeps_the_task_and_no_verdict(tmp_path, suite, monkeypatch):
    setup = open_setup(EnvironmentSettings(), tmp_path / "state", workspace=tmp_path)
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    assert unsound_tasks(HarborSuite(suite), setup, tmp_path / "state") == {}
    assert not (tmp_path / "state" / VERDICTS_FILE).exists()


@needs_docker
def test_with_require_sound_false_nothing_is_checked_and_every_task_stays(tmp_path, suite, monkeypatch):
    from wikiskill.loop.harness import Harness
    from wikiskill.loop.soundness import leave_out_unsound

    ws = workspace(tmp_path, suite, "http://127.0.0.1:9/v1", require_sound=False)
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")  # any check would fail
    with Harness.open(ws) as harness:
        leave_out_unsound(harness)
        assert harness.benchmark.tasks("val") and [task.id for task in harness.benchmark.tasks("val")] == IDS["val"]
    assert not (ws.root / UNSOUND_PATH).exists()


def test_an_unsound_harbor_task_in_train_and_in_test_is_left_out_of_both(tmp_path, suite):
    split = HarborIds(train=["rev-cat", "rev-dog"], val=["rev-owl"], test=["rev-emu"])
    harbor = HarborSuite(suite, HarborSettings(ids=split))
    digest = harbor.setup_digest()
    harbor.leave_out({"rev-dog": "its solution scored 0", "rev-emu": "its solution scored 0"})
    kept = {name: [task.id for task in harbor.tasks(name)] for name in ("train", "val", "test")}
    assert kept == {"train": ["rev-cat"], "val": ["rev-owl"], "test": []}
    assert harbor.setup_digest() != digest


@contextmanager
def engine_socket(path: Path) -> Iterator[list[str]]:
    """A unix socket standing in for the engine's: each connection is noted and closed at once."""
    asked: list[str] = []
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(path))
        listener.listen()
        listener.settimeout(0.1)
        done = threading.Event()

        def serve() -> None:
            while not done.is_set():
                try:
                    connection, _ = listener.accept()
                except TimeoutError:
                    continue
                asked.append("connect")
                connection.close()

        thread = threading.Thread(target=serve)
        thread.start()
        try:
            yield asked
        finally:
            done.set()
            thread.join()


@needs_docker
def test_a_verdict_kept_under_a_task_s_digest_is_read_and_the_engine_is_not_asked(tmp_path, suite, monkeypatch):
    harbor = HarborSuite(suite, HarborSettings(ids=HarborIds(train=["rev-cat"], val=["rev-owl"])))
    state = tmp_path / "state"
    keep_verdicts(harbor, state)
    setup = open_setup(EnvironmentSettings(), state, workspace=tmp_path)
    with engine_socket(tmp_path / "engine.sock") as asked:
        monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/engine.sock")
        assert unsound_tasks(harbor, setup, state) == {"rev-owl": "rev-owl was checked"}
    assert asked == []


def test_a_task_s_digest_changes_when_one_of_its_files_is_renamed_with_its_content_kept(suite):
    task = HarborSuite(suite).by_id["rev-cat"]
    (suite / "rev-cat" / "notes.txt").write_text("the same words")
    before = task_digest(task)
    (suite / "rev-cat" / "notes.txt").rename(suite / "rev-cat" / "notes.md")
    assert task_digest(task) != before


def test_a_verdict_is_read_back_as_it_was_kept_its_crash_rule_and_reason_included(tmp_path):
    state = tmp_path / "state" / "nested"
    Verdicts(state).put("a", Verdict(False, "its solution scored 0", CrashRule.FAILURE, "it crashes on the work"))
    Verdicts(state).put("b", Verdict(True, "sound"))
    kept = Verdicts(state)
    assert kept.get("a") == Verdict(False, "its solution scored 0", CrashRule.FAILURE, "it crashes on the work")
    assert kept.get("b") == Verdict(True, "sound", None, "")
    (state / VERDICTS_FILE).write_text(json.dumps({"c": {"sound": False, "reason": "kept by an older wikiskill"}}))
    assert Verdicts(state).get("c") == Verdict(False, "kept by an older wikiskill", None, "")


@pytest.mark.parametrize(
    "kept", ["[1, 2]", '{"a": {"sound": true}, "b": "sound", "c": {"sound": false, "reason": "r"}}', "{not json"]
)
def test_a_verdicts_file_that_is_no_map_of_verdicts_loses_only_what_is_unreadable(tmp_path, kept):
    (tmp_path / VERDICTS_FILE).write_text(kept)
    verdicts = Verdicts(tmp_path)
    assert verdicts.get("a") is None and verdicts.get("b") is None
    assert verdicts.get("c") == (Verdict(False, "r") if kept.startswith('{"') else None)
