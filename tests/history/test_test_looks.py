"""The sealed test split: evolve never scores it, and every look at it is a commit that
`status` and the report count."""

import json
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from inprocess import WorldModel, evolve_scripted, scripted_workspace
from scripted import ScriptedWorld
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.cli import app
from wikiskill.core.errors import WikiskillError
from wikiskill.history.htmlreport import render_report, report_data
from wikiskill.history.test_looks import LOOKS_BRANCH
from wikiskill.loop.harness import Harness
from wikiskill.store.trailers import Step
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply
from workspaces import until

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


def test_a_look_records_its_number_command_refs_skills_and_utc_second_in_a_commit_that_costs_nothing(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    world = ScriptedWorld()
    evolve_scripted(ws, rounds=1, world=world)
    api.compare(ws, "main~1", "main", "test", RunOptions(model_factory=lambda role: WorldModel(world)))
    (row,) = [json.loads(line) for line in ws.read_file(LOOKS_BRANCH, "looks.jsonl").splitlines()]
    assert set(row) == {"look", "command", "refs", "skills_ids", "at"}
    assert row["look"] == 1 and row["command"] == "compare"
    assert row["refs"] == {"main~1": ws.resolve("main~1"), "main": ws.head()}
    assert len(row["skills_ids"]) == 2 and all(isinstance(skills, str) and skills for skills in row["skills_ids"])
    at = datetime.fromisoformat(row["at"])
    assert at.utcoffset() is not None and not at.utcoffset() and at.microsecond == 0
    assert abs((datetime.now(UTC) - at).total_seconds()) < 600
    (look,) = ws.log(LOOKS_BRANCH)
    assert look.subject == "test look 1: compare main~1 main" and look.meta.cost_usd == 0.0
    assert ws.body(look.sha) == (
        "The test split was scored; each look makes its score a little less a measure of tasks never seen."
    )


def test_a_harness_refuses_to_score_test_outside_a_recorded_look(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    model = WorldModel(ScriptedWorld())
    with Harness.open(ws, model_factory=lambda role: model) as harness:
        with pytest.raises(WikiskillError, match="the test split is sealed"):
            harness.evaluating.evaluate("main", "test", "peek")
    assert api.status(ws).test_looks == 0


class FailsAfter(ScriptedWorld):
    """The scripted world, until the task agent has been answered `answers` times: then the
    provider refuses every request."""

    def __init__(self, answers: int):
        super().__init__()
        self.answers = answers

    def answer(self, system: str, question: str) -> Reply | str:
        self.answers -= 1
        if self.answers < 0:
            return Reply(status=400, content="the provider refuses")
        return super().answer(system, question)


def looked_at(ws: Path) -> str:
    shown = CliRunner().invoke(app, ["-C", str(ws), "status"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    return next(line for line in shown.output.splitlines() if line.startswith("test "))


def test_a_look_at_test_that_fails_part_way_still_counts(tmp_path):
    with FakeOpenAIServer(FailsAfter(answers=2)) as server:
        ws = api.init_workspace(
            tmp_path / "ws", benchmark="example-qa", model="openai/fake-model", api_base=server.base_url, concurrency=1
        )
        failed = CliRunner().invoke(app, ["-C", str(ws.root), "eval", "--split", "test"])
    assert failed.exit_code == 1 and "error: " in failed.output, failed.output
    assert len(list((ws.root / ".wikiskill/results").glob("*/*.jsonl"))) == 1  # some test tasks were scored
    assert looked_at(ws.root).startswith("test        looked at 1 time(s)")


def test_a_look_at_test_killed_part_way_still_counts(tmp_path):
    with FakeOpenAIServer(ScriptedWorld(), latency=0.2) as server:
        ws = api.init_workspace(
            tmp_path / "ws", benchmark="example-qa", model="openai/fake-model", api_base=server.base_url, concurrency=1
        )
        command = [str(Path(sys.executable).with_name("wikiskill")), "-C", str(ws.root), "eval", "--split", "test"]
        run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            until(lambda: run.poll() is not None or agent_asked(server) >= 2, timeout=60)
            assert run.poll() is None
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    assert looked_at(ws.root).startswith("test        looked at 1 time(s)")


def agent_asked(server: FakeOpenAIServer) -> int:
    """Requests of the task agent (the QA agent's system prompt)."""
    return sum(1 for body in server.requests if body["messages"][0]["content"].startswith("You are a careful"))
