"""A gate policy or an executor of the user's own is one class, named in wikiskill.yaml by its
dotted path; a name that is neither built in nor a dotted path fails in one line when the config
is read, and a class that cannot be imported or lacks a protocol member fails naming the value."""

import textwrap

import pytest

from cli_errors import one_error_line, run
from inprocess import evolve_scripted, scripted_workspace
from scripted import ScriptedWorld
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.contracts.roles import REFERENCE_AGENTS
from wikiskill.core.errors import ConfigError
from wikiskill.registries import REGISTRIES
from wikiskill.store.trailers import Decision
from wikiskill.testing.fakeserver import FakeOpenAIServer
from workspaces import edit_config, gate_of

VETO = '''
from wikiskill.loop.gate_policies import StrictPolicy
from wikiskill.contracts.gate import Verdict
from wikiskill.store.trailers import Decision
from wikiskill.testing.fakeserver import FakeOpenAIServer


class Veto(StrictPolicy):
    """Strict's evidence, but nothing passes."""

    name = "veto"

    def judge(self, candidate, incumbent, at_least=False):
        evidence = super().judge(candidate, incumbent, at_least).evidence
        return Verdict(Decision.REJECTED, "vetoed by the user's policy", evidence)


class NoJudge:
    name = "no-judge"

    def plan(self):
        return None

    @classmethod
    def from_settings(cls, settings):
        return cls()
'''

ONLY_PLAYS = """
class PlaysOnly:
    name = "plays-only"

    async def play_in(self, task, environment):
        return None
"""

COUNTING = """
from wikiskill.run.executors.local import LocalLoop

RUNS = []


class Counting(LocalLoop):
    def run(self, recipe, tasks, *args, **kwargs):
        RUNS.append(len(tasks))
        return super().run(recipe, tasks, *args, **kwargs)
"""


@pytest.fixture()
def user_modules(tmp_path, monkeypatch):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "mygates.py").write_text(textwrap.dedent(VETO))
    (tmp_path / "lib" / "myexecutors.py").write_text(textwrap.dedent(COUNTING))
    (tmp_path / "lib" / "myagents.py").write_text(textwrap.dedent(ONLY_PLAYS))
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))


def test_a_user_gate_policy_named_by_its_dotted_path_decides_a_real_round(tmp_path, user_modules):
    ws = scripted_workspace(tmp_path / "ws")
    edit_config(ws, **{"gate.policy": "mygates:Veto"})
    evolve_scripted(ws, rounds=1)
    gate = gate_of(ws, 1)
    # strict accepts this round (val 0.500 -> 0.833); the user's policy refuses it
    assert (gate.meta.decision, gate.meta.policy) == (Decision.REJECTED, "veto")
    assert "vetoed by the user's policy" in gate.subject + ws.body(gate.sha)


def test_a_user_executor_named_by_its_dotted_path_runs_the_tasks(tmp_path, user_modules):
    import myexecutors

    with FakeOpenAIServer(ScriptedWorld()) as server:
        ws = api.init_workspace(tmp_path / "ws", "example-qa", "openai/fake-model", server.base_url)
        evaluated = api.evaluate(ws, "val", options=RunOptions(executor="myexecutors.Counting"))
    assert myexecutors.RUNS == [evaluated.evaluation.n] and evaluated.evaluation.n >= 6


@pytest.mark.parametrize(
    ("setting", "value", "expected"),
    [
        (
            "gate.policy",
            "strikt",
            "gate.policy: 'strikt' is no gate policy (strict, paired, confirm, no_regression, "
            "sequential) and no dotted path to a class",
        ),
        (
            "executor",
            "proceses",
            "executor: 'proceses' is no executor (local, processes, ray) and no dotted path to a "
            "class (package.module:Class) (did you mean 'processes'?)",
        ),
    ],
)
def test_an_unknown_name_fails_in_one_line_when_the_config_is_read(tmp_path, setting, value, expected):
    ws = scripted_workspace(tmp_path / "ws")
    if "." in setting:
        edit_config(ws, **{setting: value})
    else:
        (ws.root / "wikiskill.yaml").write_text((ws.root / "wikiskill.yaml").read_text() + f"{setting}: {value}\n")
    assert expected in one_error_line(run("-C", str(ws.root), "status"))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("nosuchmodule:Veto", "gate.policy: cannot import 'nosuchmodule:Veto': No module named 'nosuchmodule'"),
        ("mygates:Nope", "gate.policy: cannot import 'mygates:Nope': module 'mygates' has no class 'Nope'"),
        ("mygates:NoJudge", "gate.policy: 'mygates:NoJudge' is not a GatePolicy: it has no judge"),
    ],
)
def test_a_dotted_path_that_does_not_load_a_policy_fails_naming_it(tmp_path, user_modules, value, expected):
    ws = scripted_workspace(tmp_path / "ws")
    edit_config(ws, **{"gate.policy": value})
    with pytest.raises(ConfigError, match="^" + expected.replace("(", r"\(").replace(")", r"\)") + "$"):
        evolve_scripted(ws, rounds=1)


def test_every_built_in_name_has_a_class_that_follows_its_protocol():
    for registry in REGISTRIES:
        kind = registry.kind
        for name in kind.builtins:
            found = registry.load(name)
            assert getattr(found, kind.named_by) == name if kind.named_by else found.__name__


def test_a_reference_agent_that_cannot_be_made_like_a_task_agent_is_refused_naming_what_it_lacks(user_modules):
    with pytest.raises(ConfigError) as refused:
        REFERENCE_AGENTS.load("myagents:PlaysOnly")
    assert str(refused.value) == "agent.runner: 'myagents:PlaysOnly' is not a ReferenceAgent: it has no from_parts"
