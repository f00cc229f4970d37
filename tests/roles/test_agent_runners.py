"""`agent.runner: python:MODULE:FUNCTION`: the user's own callable plays the QA tasks, is evolved
end to end, and keys the fingerprint; `--agent` measures main's skills on another runner."""

import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from inprocess import WorldModel
from scripted import SPELL, ScriptedWorld, skill_md
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.cli import app
from wikiskill.core.errors import ConfigError
from wikiskill.store.workspace import format_message
from wikiskill.testing.fakeserver import FakeOpenAIServer
from workspaces import UNUSED_SERVER

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

AGENT_SOURCE = '''
import json, os, re
from pathlib import Path

LOG = Path({log!r})


def solve(run):
    """Right on reversals only when a skill with the marker is in skills_dir; logs what it got."""
    listing = sorted(p.name for p in run.skills_dir.iterdir())
    with LOG.open("a") as log:
        log.write(json.dumps({{"task": run.task, "task_id": run.task_id, "skills_prompt": run.skills_prompt,
                              "skills": listing, "workdir": str(run.workdir), "exists": run.workdir.is_dir(),
                              "empty": not any(run.workdir.iterdir()), "model": run.model}}) + "\\n")
    (run.workdir / "scratch.txt").write_text("mine")
    skilled = any({marker!r} in (run.skills_dir / name / "SKILL.md").read_text() for name in listing)
    {body}
'''
ANSWER = """\
count = re.search(r"letter '(.)' occur in the word '(\\w+)'", run.task)
if count:
    return str(count.group(2).count(count.group(1)))
word = re.search(r"Write the word '(\\w+)' backwards", run.task).group(1)
answer = word[::-1] if skilled and len(word) <= 6 else word
return {"answer": f"Thinking. <answer>{answer}</answer>", "messages": [{"role": "user", "content": run.task}],
        "usage": {"calls": 1, "prompt_tokens": 7, "completion_tokens": 3}}"""


@pytest.fixture()
def agents(tmp_path, monkeypatch):
    """Writes a runner module to tmp_path (on sys.path and PYTHONPATH) and returns its log's path."""
    folder = tmp_path / "agents"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")])))
    written: list[str] = []

    def write(name: str, body: str = ANSWER) -> tuple[str, object]:
        log = tmp_path / f"{name}.jsonl"
        source = AGENT_SOURCE.format(log=str(log), marker=SPELL, body=body.replace("\n", "\n    "))
        (folder / f"{name}.py").write_text(source)
        written.append(name)
        return f"python:{name}:solve", log

    yield write
    for name in written:
        sys.modules.pop(name, None)


def read_log(log) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def workspace(tmp_path, runner: str):
    return api.init_workspace(
        tmp_path / "ws",
        benchmark="example-qa",
        model="openai/scripted",
        api_base=UNUSED_SERVER,
        concurrency=4,
        agent=runner,
    )


def world_factory():
    model = WorldModel(ScriptedWorld())
    return lambda role: model


def test_a_python_runner_is_evolved_end_to_end(tmp_path, agents):
    runner, log = agents("my_agent")
    ws = workspace(tmp_path, runner)
    assert f'runner: "{runner}"' in (ws.root / "wikiskill.yaml").read_text()

    result = api.evolve(ws, 1, options=RunOptions(model_factory=world_factory()))

    assert result.rounds_completed == 1 and result.incumbent == pytest.approx(5 / 6)
    assert [s.name for s in api.load_skills(ws)] == ["spell-letters"]
    entries = read_log(log)
    assert all(e["exists"] and e["empty"] for e in entries)
    assert len({e["workdir"] for e in entries}) == len(entries)  # a fresh folder per task ...
    assert not any((tmp_path / e["workdir"]).exists() for e in entries)  # ... removed afterwards
    assert {e["model"] for e in entries} == {"openai/scripted"}
    bare = [e for e in entries if not e["skills"]]
    skilled = [e for e in entries if e["skills"]]
    assert bare and skilled and all(e["skills"] == ["spell-letters"] for e in skilled)
    assert all(SPELL in e["skills_prompt"] for e in skilled) and not any(SPELL in e["skills_prompt"] for e in bare)
    assert any("backwards" in e["task"] for e in entries)
    traces = [json.loads(p.read_text()) for p in (ws.root / "raw").rglob("*.json") if "train-" in p.name]
    reversals = [t for t in traces if "backwards" in t["question"]]
    assert reversals and all(
        t["messages"][0] == {"role": "user", "content": t["question"]}
        and t["messages"][-1]["content"] == f"Thinking. <answer>{t['prediction']}</answer>"
        and t["usage"]["prompt_tokens"] == 7
        for t in reversals
    )
    counts = [t for t in traces if "backwards" not in t["question"]]  # a bare string: the answer itself
    assert counts and all(t["messages"] == [{"role": "assistant", "content": t["prediction"]}] for t in counts)


def test_eval_with_another_runner_is_another_fingerprint(tmp_path, agents):
    first, _ = agents("first_agent")
    second, second_log = agents("second_agent")
    ws = workspace(tmp_path, first)
    factory = world_factory()
    own = api.evaluate(ws, "val", options=RunOptions(model_factory=factory)).evaluation
    other = api.evaluate(ws, "val", options=RunOptions(model_factory=factory, agent=second)).evaluation
    assert own.fingerprint != other.fingerprint
    assert len(read_log(second_log)) == other.n  # nothing of the first runner's was reused
    again = api.evaluate(ws, "val", options=RunOptions(model_factory=factory, agent=first)).evaluation
    assert again.fingerprint == own.fingerprint

    (tmp_path / "agents" / "first_agent.py").write_text(
        (tmp_path / "agents" / "first_agent.py").read_text() + "\n# edited\n"
    )
    assert api.evaluate(ws, "val", options=RunOptions(model_factory=factory)).evaluation.fingerprint != own.fingerprint


def test_a_failing_callable_fails_that_task_alone(tmp_path, agents):
    runner, _ = agents(
        "flaky_agent", 'if "backwards" in run.task:\n    raise ValueError("cannot\\n reverse")\n' + ANSWER
    )
    ws = workspace(tmp_path, runner)
    evaluated = api.evaluate(ws, "val", options=RunOptions(model_factory=world_factory()))
    errors = {t.task_id: t.error for t in evaluated.runs[0]}
    failed = {task: error for task, error in errors.items() if error}
    assert failed and len(failed) < len(errors)
    assert set(failed.values()) == {"the agent raised ValueError: cannot reverse"}
    assert all(evaluated.evaluation.scores[task] == 0 for task in failed)
    assert any(evaluated.evaluation.scores[task] == 1 for task in errors if task not in failed)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("python:no_such_module_xyz:solve", "cannot load python:no_such_module_xyz:solve"),
        ("python:json:no_such_function", "has no 'no_such_function'"),
        ("python:not a module", "is no agent runner"),
    ],
)
def test_a_bad_python_spec_fails_in_one_line(tmp_path, agents, spec, message):
    runner, _ = agents("good_agent")
    ws = workspace(tmp_path, runner)
    result = CliRunner().invoke(app, ["-C", str(ws.root), "eval", "--agent", spec])
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.output
    with pytest.raises(ConfigError, match="agent"):
        api.init_workspace(tmp_path / "other", benchmark="example-qa", agent=spec)


def test_a_python_runner_is_refused_for_a_suite_it_cannot_play(tmp_path, agents):
    runner, _ = agents("qa_agent")
    with pytest.raises(ConfigError, match="plays QA suites and task folders only"):
        api.init_workspace(tmp_path / "ws", benchmark="textworld-cooking", agent=runner)


def test_the_builtin_runner_writes_nothing_new_to_wikiskill_yaml(tmp_path):
    ws = api.init_workspace(tmp_path / "ws", benchmark="example-qa", model="openai/scripted", agent="builtin")
    assert "runner" not in (ws.root / "wikiskill.yaml").read_text()
    assert api.open_workspace(ws.root).root == ws.root


def test_a_runner_registered_as_an_entry_point_is_found_by_name(tmp_path, agents):
    runner, log = agents("registered_agent")
    dist = tmp_path / "agents" / "registered_agent-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: registered-agent\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[wikiskill.agents]\nmine = registered_agent:solve\n")
    ws = workspace(tmp_path, "python:mine")
    evaluated = api.evaluate(ws, "val", options=RunOptions(model_factory=world_factory()))
    assert len(read_log(log)) == evaluated.evaluation.n and runner == "python:registered_agent:solve"


def test_the_example_runner_answers_through_litellm_with_the_skills_in_its_prompt(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(ScriptedWorld()) as server:
        ws = api.init_workspace(
            tmp_path / "ws",
            benchmark="example-qa",
            model="openai/fake-model",
            api_base=server.base_url,
            agent="python:python_runner:solve",
        )
        bare = api.evaluate(ws, "val").evaluation
        ws.commit(
            {"skills/spell-letters/SKILL.md": skill_md("spell-letters", SPELL)},
            format_message("r1 gate: spell-letters", {"Round": 1, "Step": "gate", "Decision": "accepted"}),
        )
        skilled = api.evaluate(ws, "val").evaluation
    sys.modules.pop("python_runner", None)
    assert bare.mean == pytest.approx(0.5) and skilled.mean == pytest.approx(5 / 6)


def test_worker_processes_import_the_runner_from_pythonpath(tmp_path, agents):
    runner, log = agents("pooled_agent")
    ws = workspace(tmp_path, runner)
    pooled = api.evaluate(ws, "val", options=RunOptions(executor="processes", workers=2, concurrency=2)).evaluation
    assert len(read_log(log)) == pooled.n and pooled.mean == pytest.approx(0.5)
