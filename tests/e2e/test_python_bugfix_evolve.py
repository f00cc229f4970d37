"""The shipped python-bugfix suite evolves one round end to end: `wikiskill init --benchmark
tasks:<suite>`, the built-in workdir agent (its `bash` tool, for real) against the scripted server,
the suite's pytest check as the scorer. The scripted agent writes the known-good fix only when its
system prompt carries the proposed skill, so the gate accepts it on val."""

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scripted import SPELL, ScriptedWorld
from wikiskill import api
from wikiskill.cli import app
from wikiskill.core.resources import data_dir
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

SUITE = data_dir("benchmarks") / "python-bugfix"
SOLUTIONS = Path(__file__).parents[1] / "fixtures" / "python_bugfix_solutions"
WORKDIR_AGENT = "You are a software engineer working in a task's working directory"


def fix_command(task_id: str) -> str:
    """One bash command that writes the task's known-good files over the shipped ones."""
    parts = []
    for number, path in enumerate(sorted(p for p in (SOLUTIONS / task_id).rglob("*") if p.is_file())):
        relative = path.relative_to(SOLUTIONS / task_id)
        marker = f"FIX{number}"
        parts.append(f"mkdir -p '{relative.parent}'\ncat > '{relative}' <<'{marker}'\n{path.read_text()}{marker}\n")
    return "".join(parts)


class BugfixWorld(ScriptedWorld):
    """ScriptedWorld's maintainer and proposer; its task agent fixes the bug only when skilled."""

    def __init__(self):
        self.task_of = {
            (folder / "task.md").read_text().strip(): folder.name
            for folder in SUITE.glob("*/*")
            if (folder / "task.md").exists()
        }
        super().__init__(trace_ids=sorted(path.name for path in (SUITE / "train").iterdir()))

    def __call__(self, body: dict) -> Reply | str:
        messages = body["messages"]
        if messages[0]["content"].startswith(WORKDIR_AGENT):
            return self.work(messages)
        return super().__call__(body)

    def work(self, messages: list[dict]) -> Reply:
        skilled = SPELL in messages[0]["content"]
        task_id = next(tid for text, tid in self.task_of.items() if text in messages[1]["content"])
        if skilled and not any(m["role"] == "assistant" for m in messages):
            return Reply(tool_calls=[{"name": "bash", "arguments": {"command": fix_command(task_id)}}])
        return Reply(tool_calls=[{"name": "finish", "arguments": {"answer": "fixed" if skilled else "gave up"}}])


@pytest.mark.slow
def test_the_example_bugfix_suite_evolves_a_round_with_the_built_in_workdir_agent(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    ws = tmp_path / "ws"
    with FakeOpenAIServer(BugfixWorld()) as server:
        init = CliRunner().invoke(
            app,
            [
                "init",
                str(ws),
                "--benchmark",
                f"tasks:{SUITE}",
                "--model",
                "openai/fake-model",
                "--api-base",
                server.base_url,
            ],
        )
        assert init.exit_code == 0, init.output
        evolve = CliRunner().invoke(app, ["-C", str(ws), "evolve", "--rounds", "1"])
        assert evolve.exit_code == 0, evolve.output

    workspace = api.open_workspace(ws)
    assert [skill.name for skill in api.load_skills(workspace)] == ["spell-letters"]
    train = [json.loads(path.read_text()) for path in (ws / "raw" / "r001" / "train").glob("*.json")]
    assert len(train) == 10 and all(t["kind"] == "workdir" and t["score"] == 0.0 for t in train)
    assert all(re.search(r"FAILED|failed|Error", t["feedback"] or "") for t in train)  # pytest's words
    impact = (ws / "wiki" / "skill-impact.md").read_text()
    assert "spell-letters" in impact and "accepted" in impact.lower()
