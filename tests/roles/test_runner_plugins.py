"""A new kind of task-agent runner is one module and its registration: a plugin package whose
one module holds the runner (a `BaseRunner` naming the values it claims and the agent it makes),
registered under the `wikiskill.runners` entry-point group, and `evolve` plays with it. Nothing
of wikiskill is edited."""

import sys

import pytest

from cli_errors import one_error_line, run
from inprocess import evolve_scripted, scripted_workspace
from plugin_packages import write_plugin
from wikiskill.benchmarks import load_benchmark
from wikiskill.core.parts import TASK_RUNNER
from wikiskill.loop.fingerprint import eval_setup
from wikiskill.store.settings import load_config
from wikiskill.store.trailers import Step
from wikiskill.store.workspace import MAIN
from workspaces import edit_config

MODULE = '''
"""A runner that plays with the built-in QA agent and notes every task it plays."""
from wikiskill.protocols import BaseRunner
from wikiskill.roles.agent import QAAgent

PLAYED = []


class Noting:
    def __init__(self, inner):
        self.inner = inner

    @classmethod
    def from_parts(cls, parts):
        return cls(QAAgent.from_parts(parts))

    async def run(self, task):
        PLAYED.append(task.id)
        return await self.inner.run(task)


class NotingRunner(BaseRunner):
    """Plays QA suites with the built-in QA agent, noting each task."""

    prompts_skills = True

    @classmethod
    def claim(cls, value):
        return "noting" if value.lower() == "noting" else None

    @classmethod
    def described(cls):
        return "noting"

    @classmethod
    def player(cls, config, benchmark):
        return Noting
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return write_plugin(
        tmp_path_factory.mktemp("plugin"), "noting-runner", {"wikiskill.runners": {"noting": "NotingRunner"}}, MODULE
    )


@pytest.fixture()
def installed(site, monkeypatch):
    monkeypatch.syspath_prepend(str(site))
    yield
    sys.modules.pop("noting_runner", None)


def test_a_runner_from_a_plugin_package_plays_every_task_of_an_evolve(tmp_path, installed):
    import noting_runner

    ws = scripted_workspace(tmp_path / "ws")
    edit_config(ws, **{"agent.runner": "NOTING"})
    result = evolve_scripted(ws, rounds=1)
    assert result.rounds_completed == 1
    played = set(noting_runner.PLAYED)
    assert {task for task in played if task.startswith("train")} and {task for task in played if task.startswith("val")}
    config = load_config(ws.root)
    setup = eval_setup(config, load_benchmark(config, ws.root), "val")
    assert setup.agent["runner"] == "noting"  # its results are never taken for another runner's
    baseline = next(c.meta for c in ws.log(MAIN) if c.meta.step == Step.BASELINE)
    assert baseline.setup == setup.id


def test_the_plugin_runner_is_listed_after_the_built_in_kinds(installed):
    assert TASK_RUNNER.names() == [*TASK_RUNNER.builtins, "noting"]


def test_without_the_package_its_runner_is_refused_in_one_line_naming_every_runner(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    edit_config(ws, **{"agent.runner": "noting"})
    line = one_error_line(run("-C", str(ws.root), "status"))
    assert "'noting' is no agent runner (builtin, python:MODULE:FUNCTION, python:NAME, qwen-code" in line
    assert "or oracle or nop on a Harbor suite)" in line
