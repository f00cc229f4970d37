"""The switches for the paper's ablations: no maintainer (the proposer reads traces only), and a
task agent that may read the wiki with a `read_wiki` tool."""

import yaml
from typer.testing import CliRunner

from conftest import git
from scripted import ScriptedWorld
from wikiskill.cli import app
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply


class WikiReadingWorld(ScriptedWorld):
    """The task agent reads the reversal page whenever it is offered `read_wiki`, then answers."""

    def __call__(self, body):
        messages = body["messages"]
        offered = [tool["function"]["name"] for tool in body.get("tools") or []]
        is_agent = messages[0]["content"].startswith("You are a careful problem solver")
        if is_agent and "read_wiki" in offered and messages[-1]["role"] == "user":
            return Reply(tool_calls=[{"name": "read_wiki", "arguments": {"name": "patterns/Reversal-Slips.md"}}])
        if is_agent:
            return self.answer(messages[0]["content"], messages[1]["content"])
        return super().__call__(body)


def workspace(tmp_path, server, **settings):
    ws = tmp_path / "ws"
    runner = CliRunner()
    result = runner.invoke(
        app,
        ["init", str(ws), "--benchmark", "example-qa", "--model", "openai/fake-model", "--api-base", server.base_url],
    )
    assert result.exit_code == 0, result.output
    config = yaml.safe_load((ws / "wikiskill.yaml").read_text())
    for section, values in settings.items():
        config[section] = {**(config.get(section) or {}), **values}
    (ws / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    return ws, runner


def test_without_the_maintainer_no_wiki_is_written_and_the_proposer_still_runs(tmp_path):
    with FakeOpenAIServer(ScriptedWorld()) as server:
        ws, runner = workspace(tmp_path, server, maintainer={"enabled": False})
        result = runner.invoke(app, ["-C", str(ws), "evolve", "--rounds", "1"])
        assert result.exit_code == 0, result.output
        systems = [r["messages"][0]["content"] for r in server.requests]
    steps = git(ws, "log", "--first-parent", "--format=%(trailers:key=Wikiskill-Step,valueonly)", "main").split()
    assert "maintain" not in steps and "gate" in steps
    assert not any(s.startswith("You are a Wiki Maintainer Agent") for s in systems)
    assert any(s.startswith("You are a Skill Proposer Agent") for s in systems)
    assert list((ws / "wiki/patterns").glob("*.md")) == []


def test_with_wiki_access_the_agent_reads_pages_of_main_through_a_tool(tmp_path):
    with FakeOpenAIServer(WikiReadingWorld()) as server:
        ws, runner = workspace(tmp_path, server, agent={"wiki_access": True})
        result = runner.invoke(app, ["-C", str(ws), "evolve", "--rounds", "2"])
        assert result.exit_code == 0, result.output
        requests = server.requests
    answers = [
        m["content"]
        for r in requests
        for m in r["messages"]
        if m["role"] == "tool" and not r["messages"][0]["content"].startswith("You are a Skill Proposer Agent")
    ]
    assert any(answer.startswith("No wiki page named 'patterns/Reversal-Slips.md'") for answer in answers)  # round 1
    assert any("## Root cause" in answer and "slug: reversal-slips" in answer for answer in answers)  # round 2
    assert all(r.get("tools") for r in requests if r["messages"][0]["content"].startswith("You are a careful"))
