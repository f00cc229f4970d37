"""A plugin package adds a gate policy, an executor, a coding-agent CLI preset, a QA scorer and a
kind of task agent with no edit of wikiskill: a real package folder with entry points in the kinds'
groups (`wikiskill.gate_policies`, `wikiskill.executors`, `wikiskill.cli_presets`,
`wikiskill.scorers`, `wikiskill.task_agents`),
in a folder on sys.path as pip installs it (written as pip leaves it, which one test checks against
pip's own install); the settings then accept the plugins' names, which `wikiskill` lists beside the
built-ins."""

import json
import sys
from importlib.metadata import distributions
from pathlib import Path

import pytest
import yaml

from cli_errors import one_error_line, run
from inprocess import evolve_scripted, scripted_workspace
from plugin_packages import install_plugin, write_plugin
from scripted import ScriptedWorld
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.core.parts import CLI_PRESET, EXECUTOR, GATE_POLICY, SCORER, TASK_AGENT
from wikiskill.store.trailers import Decision
from wikiskill.testing.fakeserver import FakeOpenAIServer
from workspaces import UNUSED_SERVER, edit_config, gate_of

ENTRY_POINTS = {
    "wikiskill.gate_policies": {"veto": "Veto"},
    "wikiskill.executors": {"counting": "Counting"},
    "wikiskill.cli_presets": {"echo-answer": "EchoAnswer"},
    "wikiskill.scorers": {"any-answer": "AnyAnswer"},
    "wikiskill.task_agents": {"counted": "Counted"},
}

MODULE = '''
"""Five parts of wikiskill, each found by its entry point."""
import os
import sys

from wikiskill.contracts.coding_agent import CliTranscript
from wikiskill.contracts.gate import Verdict
from wikiskill.loop.gate_policies import StrictPolicy
from wikiskill.roles.agent import QAAgent
from wikiskill.run.executors.local import LocalLoop
from wikiskill.store.trailers import Decision

RUNS = []
MADE = []

ANSWER = """
import re, sys
open(sys.argv[1], "a").write("ran\\\\n")
word = re.search(r"the word '(\\\\w+)' backwards", sys.argv[2])
print(f"<answer>{word.group(1)[::-1] if word else 'unknown'}</answer>")
"""


class Veto(StrictPolicy):
    """Strict's evidence, but nothing passes."""

    name = "veto"

    def judge(self, candidate, incumbent, at_least=False):
        evidence = super().judge(candidate, incumbent, at_least).evidence
        return Verdict(Decision.REJECTED, "vetoed by the plugin's policy", evidence)


class Counting(LocalLoop):
    """The local loop, counting the tasks of each run."""

    def run(self, recipe, tasks, *args, **kwargs):
        RUNS.append(len(tasks))
        return super().run(recipe, tasks, *args, **kwargs)


class EchoAnswer:
    """A CLI that writes a word backwards when asked to (and answers nothing else), logging each
    run to $ACME_LOG."""

    name = "echo-answer"
    program = sys.executable
    skills_folder = ".agents/skills"

    def argv(self, run):
        return [self.program, "-c", ANSWER, os.environ["ACME_LOG"], run.prompt]

    def environment(self, run):
        return {}

    def prepare_home(self, run):
        pass

    def version_argv(self):
        return [self.program, "--version"]

    def parse(self, lines, skills):
        text = "\\n".join(lines).strip()
        return CliTranscript(answer=text or None, messages=[{"role": "assistant", "content": text}])


class AnyAnswer:
    """Any answer at all scores 1."""

    def score(self, prediction, answer):
        return float(bool(prediction))


class Counted(QAAgent):
    """The built-in QA agent, noting the skills of each agent made."""

    name = "counted"

    @classmethod
    def from_parts(cls, parts):
        MADE.append([skill.name for skill in parts.skills])
        return super().from_parts(parts)
'''


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory) -> Path:
    return write_plugin(tmp_path_factory.mktemp("plugin"), "acme-parts", ENTRY_POINTS, MODULE)


@pytest.fixture()
def installed(plugin_site, monkeypatch):
    monkeypatch.syspath_prepend(str(plugin_site))
    yield
    sys.modules.pop("acme_parts", None)


def test_the_plugins_names_are_accepted_and_listed_after_the_built_ins(installed):
    assert GATE_POLICY.names()[-1] == "veto" and GATE_POLICY.check("VETO") == "veto"
    assert EXECUTOR.names() == [*EXECUTOR.builtins, "counting"]
    assert "echo-answer" in CLI_PRESET.names()
    assert SCORER.names() == [*SCORER.builtins, "any-answer"]
    assert TASK_AGENT.names() == [*TASK_AGENT.builtins, "counted"]


def test_a_package_installed_into_a_folder_on_the_path_is_seen_by_the_next_look_up(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    assert "veto" not in GATE_POLICY.names()  # read, and kept, before the package is there
    assert install_plugin(tmp_path, "acme-parts", ENTRY_POINTS, MODULE) == site
    assert GATE_POLICY.names()[-1] == "veto" and TASK_AGENT.names()[-1] == "counted"
    monkeypatch.undo()
    assert "veto" not in GATE_POLICY.names()


def test_the_package_written_as_pip_leaves_it_reads_as_pips_own_install(tmp_path):
    def read(site: Path) -> tuple[str, str, list[tuple[str, str, str]], str]:
        [dist] = distributions(path=[str(site)])
        points = sorted((point.group, point.name, point.value) for point in dist.entry_points)
        return dist.metadata["Name"], dist.version, points, (site / "acme_parts.py").read_text()

    installed = install_plugin(tmp_path, "acme-parts", ENTRY_POINTS, MODULE)
    assert read(write_plugin(tmp_path / "written", "acme-parts", ENTRY_POINTS, MODULE)) == read(installed)


def test_without_the_package_its_name_is_refused_in_one_line(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    edit_config(ws, **{"gate.policy": "veto"})
    assert "'veto' is no gate policy (strict, paired, confirm, no_regression, sequential)" in one_error_line(
        run("-C", str(ws.root), "status")
    )


def test_a_plugin_gate_policy_decides_a_real_round(tmp_path, installed):
    ws = scripted_workspace(tmp_path / "ws")
    edit_config(ws, **{"gate.policy": "veto"})
    evolve_scripted(ws, rounds=1)
    gate = gate_of(ws, 1)
    # strict accepts this round (val 0.500 -> 0.833); the plugin's policy refuses it
    assert (gate.meta.decision, gate.meta.policy) == (Decision.REJECTED, "veto")
    assert "vetoed by the plugin's policy" in gate.subject + ws.body(gate.sha)


def test_a_plugin_executor_runs_the_tasks(tmp_path, installed):
    import acme_parts

    with FakeOpenAIServer(ScriptedWorld()) as server:
        ws = api.init_workspace(tmp_path / "ws", "example-qa", "openai/fake-model", server.base_url)
        evaluated = api.evaluate(ws, "val", options=RunOptions(executor="counting"))
    assert acme_parts.RUNS == [evaluated.evaluation.n] and evaluated.evaluation.n >= 6


def test_a_plugin_cli_preset_plays_every_task(tmp_path, installed, monkeypatch):
    log = tmp_path / "runs.log"
    monkeypatch.setenv("ACME_LOG", str(log))
    ws = api.init_workspace(tmp_path / "ws", benchmark="example-qa", model="openai/fake-model", api_base=UNUSED_SERVER)
    path = ws.root / "wikiskill.yaml"
    data = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**data, "agent": {**data.get("agent", {}), "runner": "echo-answer"}}))
    evaluation = api.evaluate(ws, "val").evaluation
    assert len(log.read_text().splitlines()) == evaluation.n >= 6
    assert 0 < evaluation.mean < 1  # it answers one kind of task only


def test_a_plugin_scorer_scores_a_jsonl_suite(tmp_path, installed):
    suite = tmp_path / "suite"
    suite.mkdir()
    for split in ("train", "val", "test"):
        rows = [{"id": f"{split}-{n}", "question": f"Name the number {n}.", "answer": str(n)} for n in range(3)]
        (suite / f"{split}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (suite / "suite.json").write_text(json.dumps({"scorer": "any-answer"}))
    with FakeOpenAIServer(lambda body: "<answer>a wrong answer</answer>") as server:
        ws = api.init_workspace(tmp_path / "ws", f"jsonl:{suite}", "openai/fake-model", server.base_url)
        evaluation = api.evaluate(ws, "val").evaluation
    assert evaluation.scores == {"val-0": 1.0, "val-1": 1.0, "val-2": 1.0}  # `exact` would score each 0


def test_a_plugin_agent_kind_plays_every_task(tmp_path, installed):
    import acme_parts

    with FakeOpenAIServer(ScriptedWorld()) as server:
        ws = api.init_workspace(tmp_path / "ws", "example-qa", "openai/fake-model", server.base_url)
        edit_config(ws, **{"agent.kind": "counted"})
        evaluation = api.evaluate(ws, "val").evaluation
    assert acme_parts.MADE == [[]] and evaluation.n >= 6
    assert 0 < evaluation.mean < 1  # the built-in QA agent's answers, as the scripted world gives them


def test_an_agent_kind_that_plays_another_kind_of_suite_is_refused_in_one_line_before_a_run(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    edit_config(ws, **{"agent.kind": "shell"})
    refused = "agent.kind: shell plays workdir suites; example-qa is a qa suite"
    assert refused in one_error_line(run("-C", str(ws.root), "eval"))
    assert refused in one_error_line(run("-C", str(ws.root), "evolve", "--dry-run"))
    assert run("-C", str(ws.root), "status").exit_code == 0  # reading the settings checks the name only
