"""A budget stops `evolve` cleanly between tasks through the CLI, and the next `evolve` continues
without asking the model any task a second time."""

import json
from pathlib import Path

from typer.testing import CliRunner

from conftest import git
from scripted import ScriptedWorld
from wikiskill.cli import app
from wikiskill.testing.fakeserver import FakeOpenAIServer

EXAMPLE = Path(__file__).resolve().parents[2] / "benchmarks" / "example-qa"


def agent_questions(requests: list[dict]) -> list[str]:
    return [
        r["messages"][-1]["content"]
        for r in requests
        if r["messages"][0]["content"].startswith("You are a careful problem solver")
    ]


def set_max_calls(ws: Path, value: str) -> None:
    config = ws / "wikiskill.yaml"
    text = config.read_text()
    start = text.index("max_calls:")
    end = text.index("\n", start)
    config.write_text(f"{text[:start]}max_calls: {value}{text[end:]}")


def test_budget_stops_between_tasks_and_evolve_resumes(tmp_path):
    runner = CliRunner()
    ws = tmp_path / "ws"
    with FakeOpenAIServer(ScriptedWorld()) as server:
        result = runner.invoke(
            app,
            [
                "init",
                str(ws),
                "--benchmark",
                "example-qa",
                "--model",
                "openai/fake-model",
                "--api-base",
                server.base_url,
                "--concurrency",
                "1",
            ],
        )
        assert result.exit_code == 0, result.output
        set_max_calls(ws, "8")  # baseline val takes 6, then 2 of the 12 rollout tasks
        result = runner.invoke(app, ["-C", str(ws), "evolve", "--rounds", "1"])
        assert result.exit_code == 1
        errors = [line for line in result.output.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "budget reached: 8 of budget.max_calls 8" in errors[0]
        assert "Traceback" not in result.output
        assert len(server.requests) == 8
        steps = git(ws, "log", "--format=%(trailers:key=Wikiskill-Step,valueonly)", "main").split()
        assert steps == ["baseline", "settings"]  # the rollout step was not committed at all
        assert git(ws, "status", "--porcelain") == ""  # the budget edit above went in as the settings step

        set_max_calls(ws, "null")
        result = runner.invoke(app, ["-C", str(ws), "evolve", "--rounds", "1"])
        assert result.exit_code == 0, result.output
        asked = agent_questions(server.requests)
    train = {json.loads(line)["question"] for line in (EXAMPLE / "train.jsonl").read_text().splitlines()}
    rollout = [question for question in asked if question in train]
    assert len(rollout) == len(set(rollout)) == len(train) == 12  # each train task asked once over both runs
    rollout_commit = git(
        ws, "log", "-1", "--format=%(trailers:key=Wikiskill-Tokens-Agent,valueonly)", "--grep", "rollout", "main"
    ).strip()
    assert int(rollout_commit) > 0  # per-role usage trailers
