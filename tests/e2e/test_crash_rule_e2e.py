"""An evolve on a HumanEval-style task-folder suite against the scripted server: the check crashes
in its own code on what the untouched encode() returns, and its reference in solution/ scores 1,
so that crash is each task's failure (scored 0, the traceback its feedback), never
infrastructure; the skill that makes the agent write encode() is merged; a task whose check
crashes on its own reference is left out of every split and named, never scored 0."""

import json
import sys

import pytest

from scripted import ScriptedWorld
from taskfolders import SOLVED_ENCODE, encode_suite, folder_workspace, install_runner
from wikiskill import api
from wikiskill.history.status import status
from wikiskill.store.unsound import UNSOUND_PATH
from wikiskill.testing.fakeserver import FakeOpenAIServer

CRASHING_REFERENCE = "def encode(word):\n    return None\n"
SPLITS = {"train": ["enc-a", "enc-b", "bad-t"], "val": ["enc-c", "enc-d", "bad-v"], "test": ["enc-e", "bad-e"]}
BAD = ["bad-e", "bad-t", "bad-v"]


@pytest.fixture()
def runner_module(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    yield install_runner(tmp_path, monkeypatch, "solution.py", SOLVED_ENCODE)
    sys.modules.pop("bugfix_agent", None)


def rows(text: str) -> dict[str, dict]:
    return {row["id"]: row for row in map(json.loads, text.splitlines())}


def test_a_check_that_crashes_on_wrong_answers_scores_them_zero_and_the_fixing_skill_is_merged(tmp_path, runner_module):
    suite = encode_suite(tmp_path, SPLITS, dict.fromkeys(BAD, CRASHING_REFERENCE))
    with FakeOpenAIServer(ScriptedWorld(trace_ids=["enc-a", "enc-b"])) as server:
        ws = folder_workspace(tmp_path / "ws", suite, server.base_url, runner_module, proposer={"min_trace_reads": 2})
        result = api.evolve(ws, 1)

    baseline = rows((ws.root / "raw" / "baseline" / "val.jsonl").read_text())
    assert {task: (row["score"], row.get("failure")) for task, row in baseline.items()} == {
        "enc-c": (0.0, None),
        "enc-d": (0.0, None),
    }
    train = json.loads((ws.root / "raw" / "r001" / "train" / "enc-a.json").read_text())
    assert train["score"] == 0.0 and "AttributeError: 'NoneType' object has no attribute 'strip'" in train["feedback"]
    assert not (ws.root / "raw" / "r001" / "train" / "bad-t.json").exists()
    assert result.rounds_completed == 1 and result.incumbent == 1.0
    assert [skill.name for skill in api.load_skills(ws)] == ["spell-letters"]
    unsound = json.loads((ws.root / UNSOUND_PATH).read_text())
    assert list(unsound) == BAD and all(
        reason.startswith("it crashes on its own reference") for reason in unsound.values()
    )
    assert status(ws).unsound == unsound
