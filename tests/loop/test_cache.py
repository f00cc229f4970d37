"""Caches through the CLI: an unchanged skills tree is never validated twice, and with
`llm.cache: true` a repeated eval at temperature 0 makes no HTTP request at all."""

import shutil
from pathlib import Path

from typer.testing import CliRunner

from conftest import git
from scripted import USELESS, ScriptedWorld, create
from wikiskill.cli import app
from wikiskill.testing.fakeserver import FakeOpenAIServer

OTHER = "OTHER-MARKER"


def agent_prompts(requests: list[dict]) -> list[tuple[str, str]]:
    """(system prompt, question) of every task-agent request."""
    return [
        (r["messages"][0]["content"], r["messages"][-1]["content"])
        for r in requests
        if r["messages"][0]["content"].startswith("You are a careful problem solver")
    ]


def init(runner: CliRunner, ws: Path, server: FakeOpenAIServer) -> None:
    result = runner.invoke(
        app,
        ["init", str(ws), "--benchmark", "example-qa", "--model", "openai/fake-model", "--api-base", server.base_url],
    )
    assert result.exit_code == 0, result.output


def test_rejected_rounds_never_revalidate_the_incumbent(tmp_path):
    runner = CliRunner()
    ws = tmp_path / "ws"
    world = ScriptedWorld(proposals={1: create("useless-hint", USELESS), 2: create("other-hint", OTHER)})
    with FakeOpenAIServer(world) as server:
        init(runner, ws, server)
        result = runner.invoke(app, ["-C", str(ws), "evolve", "--rounds", "2"])
        assert result.exit_code == 0, result.output
        evolved = agent_prompts(server.requests)
        result = runner.invoke(app, ["-C", str(ws), "eval", "--split", "val"])
        assert result.exit_code == 0, result.output
        after = agent_prompts(server.requests)[len(evolved) :]
    decisions = git(ws, "log", "--format=%(trailers:key=Wikiskill-Decision,valueonly)", "main").split()
    assert decisions == ["rejected", "rejected"]
    plain = [question for system, question in evolved if USELESS not in system and OTHER not in system]
    assert len(plain) == 6 + 2 * 12  # baseline val once, then the two rollouts; no re-validation
    assert sum(USELESS in system for system, _ in evolved) == 6  # each candidate validated once
    assert sum(OTHER in system for system, _ in evolved) == 6
    assert after == []  # eval of main's unchanged skills on val: answered from the results cache


def test_response_cache_makes_a_rerun_free(tmp_path):
    runner = CliRunner()
    ws = tmp_path / "ws"
    with FakeOpenAIServer(ScriptedWorld()) as server:
        init(runner, ws, server)
        with (ws / "wikiskill.yaml").open("a") as config:
            config.write("\nllm:\n  cache: true\n")
        first = runner.invoke(app, ["-C", str(ws), "eval", "--split", "test"])
        assert first.exit_code == 0, first.output
        asked = len(server.requests)
        shutil.rmtree(ws / ".wikiskill" / "results")  # forget finished tasks: only replies are cached
        second = runner.invoke(app, ["-C", str(ws), "eval", "--split", "test"])
        assert second.exit_code == 0, second.output
    assert asked == 6 and len(server.requests) == asked
    table = [line for line in first.output.splitlines() if "test-0" in line]
    assert len(table) == 6 and table == [line for line in second.output.splitlines() if "test-0" in line]
