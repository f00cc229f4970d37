"""`kill -9`, Ctrl-C or a failing provider stop a real `wikiskill evolve` after some val tasks of
an evaluation are scored; `wikiskill evolve` again: every task the stopped run scored comes from
the result cache, and the task agent is asked only the val tasks still missing (counted on the
scripted server). The stop message, where there is one, says how many are kept and missing."""

import json
import os
import signal
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import kill_resume  # noqa: E402
from scripted import SPELL, ScriptedWorld, reversal_suite  # noqa: E402
from wikiskill import api  # noqa: E402
from wikiskill.cli import app  # noqa: E402
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply  # noqa: E402
from workspaces import until  # noqa: E402

pytestmark = pytest.mark.slow

VAL = 12
TRAIN = 12  # example-qa's, all rolled out
POINTS = {  # the evaluation killed: (results cached when the kill fires, whether its skills carry SPELL, options)
    "the baseline": (5, False, ()),
    "round 1's validation": (VAL + TRAIN + 5, True, ()),
    "the baseline on worker processes": (5, False, ("--executor", "processes", "--workers", "2")),
}


@pytest.fixture(scope="module")
def start():
    return kill_resume.ForkServer()


def val_ids(suite: Path) -> dict[str, str]:
    """Each val question's task id."""
    rows = map(json.loads, (suite / "val.jsonl").read_text().splitlines())
    return {row["question"]: row["id"] for row in rows}


def asked(requests: list[dict], questions: dict[str, str], skilled: bool) -> list[str]:
    """The val tasks the task agent was asked, with the round's skill (SPELL) or without it."""
    ids = []
    for body in requests:
        system, question = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system.startswith(kill_resume.AGENT_PROMPT) and (SPELL in system) == skilled:
            ids += [task for text, task in questions.items() if text in question]
    return ids


@pytest.mark.parametrize("point", POINTS)
def test_evolve_after_a_kill_mid_val_asks_the_agent_only_the_unscored_tasks(start, tmp_path, point):
    results, skilled, options = POINTS[point]
    suite = reversal_suite(tmp_path / "suite", VAL)
    questions = val_ids(suite)
    with FakeOpenAIServer(ScriptedWorld(), latency=0.05) as server:
        ws = tmp_path / "ws"
        api.init_workspace(
            ws, benchmark=f"jsonl:{suite}", model="openai/fake-model", api_base=server.base_url, concurrency=4
        )
        killed = kill_resume.run_evolve(ws, f"result:{results}", start, ("--rounds", "1", *options))
        assert killed.exit_code is None, killed.stderr
        journals = {}
        for (cache, task), _ in kill_resume.cached_results(ws).items():
            journals.setdefault(cache, set()).add(task)
        partial = [tasks for tasks in journals.values() if tasks <= set(questions.values()) and len(tasks) < VAL]
        assert len(partial) == 1, journals  # killed part-way through the val tasks, some of them scored
        scored = partial[0]

        before = len(server.requests)
        resumed = kill_resume.run_evolve(ws, start=start, extra=("--rounds", "1", *options))
        again = asked(server.requests[before:], questions, skilled)

    assert resumed.exit_code == 0, resumed.stderr
    assert sorted(again) == sorted(set(questions.values()) - scored)  # each missing task once, no scored one
    assert all(count == 1 for count in kill_resume.cached_results(ws).values())
    assert kill_resume.completed_rounds(ws) == 1


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_ctrl_c_mid_baseline_says_how_many_scored_tasks_are_kept_and_evolve_runs_the_rest(start, tmp_path):
    suite = reversal_suite(tmp_path / "suite", VAL)
    questions = val_ids(suite)
    with FakeOpenAIServer(ScriptedWorld(), latency=0.05) as server:
        ws = tmp_path / "ws"
        api.init_workspace(
            ws, benchmark=f"jsonl:{suite}", model="openai/fake-model", api_base=server.base_url, concurrency=4
        )
        lines = kill_resume.ResultLines(ws)
        run = start(ws, tmp_path / "interrupted", "--rounds", "1")
        try:
            until(lambda: run.poll() is not None or lines.count() >= 3, timeout=120)
            assert run.poll() is None
            os.killpg(run.pid, signal.SIGINT)
            until(lambda: run.poll() is not None, timeout=60)
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
        assert run.wait() == 130
        scored = {task for _, task in kill_resume.cached_results(ws)}
        said = one_line((tmp_path / "interrupted.err").read_text())
        assert (
            f"interrupted; {len(scored)} scored tasks are kept, the same command run again runs only the "
            f"{VAL - len(scored)} missing"
        ) in said, said
        before = len(server.requests)
        resumed = kill_resume.run_evolve(ws, start=start, extra=("--rounds", "1"))
        again = asked(server.requests[before:], questions, skilled=False)
    assert resumed.exit_code == 0, resumed.stderr
    assert 0 < len(scored) < VAL and sorted(again) == sorted(set(questions.values()) - scored)


class RefusesAfter(ScriptedWorld):
    """The scripted world, but the provider refuses the task agent once it was answered `answers` times."""

    def __init__(self, answers: int):
        super().__init__()
        self.answers = answers

    def answer(self, system: str, question: str) -> Reply | str:
        self.answers -= 1
        if self.answers < 0:
            return Reply(status=400, content="the provider refuses")
        return super().answer(system, question)


def test_a_provider_failing_mid_baseline_says_how_many_scored_tasks_are_kept(tmp_path):
    suite = reversal_suite(tmp_path / "suite", VAL)
    questions = val_ids(suite)
    world = RefusesAfter(answers=5)
    with FakeOpenAIServer(world) as server:
        ws = tmp_path / "ws"
        api.init_workspace(
            ws, benchmark=f"jsonl:{suite}", model="openai/fake-model", api_base=server.base_url, concurrency=1
        )
        stopped = CliRunner().invoke(app, ["-C", str(ws), "evolve", "--rounds", "1"])
        said = one_line(stopped.output)
        assert stopped.exit_code == 1 and said.endswith(
            "; 5 scored tasks are kept, the same command run again runs only the 7 missing"
        ), said
        world.answers = 1000
        before = len(server.requests)
        resumed = CliRunner().invoke(app, ["-C", str(ws), "evolve", "--rounds", "1"])
        again = asked(server.requests[before:], questions, skilled=False)
    assert resumed.exit_code == 0, resumed.output
    assert sorted(again) == sorted(questions.values())[5:]
