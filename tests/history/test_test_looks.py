"""The sealed test split: evolve never scores it, and every look at it is a commit that
`status` and the report count."""

import json
from pathlib import Path

import pytest

from inprocess import WorldModel, evolve_scripted, scripted_workspace
from scripted import ScriptedWorld
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.core.errors import WikiskillError
from wikiskill.history.htmlreport import render_report, report_data
from wikiskill.history.test_looks import LOOKS_BRANCH
from wikiskill.loop.harness import Harness
from wikiskill.store.trailers import Step

TEST_FILE = "benchmarks/example-qa/test.jsonl"


class Watching(ScriptedWorld):
    """The scripted world, keeping every question the task agent was asked."""

    def __init__(self):
        super().__init__()
        self.asked: list[str] = []

    def answer(self, system: str, question: str) -> str:
        self.asked.append(question)
        return super().answer(system, question)


def held_out_questions() -> set[str]:
    root = Path(__file__).resolve().parents[2]
    return {json.loads(line)["question"] for line in (root / TEST_FILE).read_text().splitlines()}


def test_evolve_never_scores_test_and_each_look_at_it_is_counted(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    world = Watching()
    evolve_scripted(ws, rounds=1, world=world)
    held_out = held_out_questions()
    assert world.asked and not any(question in asked for question in held_out for asked in world.asked)
    assert api.status(ws).test_looks == 0

    options = RunOptions(model_factory=lambda role: WorldModel(world))
    api.evaluate(ws, "test", "main", options)
    api.evaluate(ws, "test", "main", options)
    api.evaluate(ws, "val", "main", options)  # val is not test: no look
    assert any(question in asked for question in held_out for asked in world.asked)
    assert api.status(ws).test_looks == 2
    looks = [c for c in ws.log(LOOKS_BRANCH) if c.meta.step == Step.TEST_LOOK]
    assert [c.meta.test_looks for c in looks] == [2, 1]
    rows = [json.loads(line) for line in ws.read_file(LOOKS_BRANCH, "looks.jsonl").splitlines()]
    assert [row["command"] for row in rows] == ["eval", "eval"] and rows[0]["refs"]["main"] == ws.head()
    page = render_report(report_data(ws), "ws")
    assert "test split looked at 2 time(s)" in page


def test_a_harness_refuses_to_score_test_outside_a_recorded_look(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    model = WorldModel(ScriptedWorld())
    with Harness(ws, model_factory=lambda role: model) as harness:
        with pytest.raises(WikiskillError, match="the test split is sealed"):
            harness.evaluating.evaluate("main", "test", "peek")
    assert api.status(ws).test_looks == 0
