"""The evaluation fingerprint changes with everything that decides a score, and nothing else."""

import ast
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager

import pytest

from inprocess import WorldModel, evolve_scripted, scripted_workspace
from scripted import ScriptedWorld
from wikiskill.benchmarks import load_benchmark
from wikiskill.loop import fingerprint
from wikiskill.loop.fingerprint import AGENT_SETTINGS, AGENT_TEMPLATES, LEFT_OUT_CODE, code_files, eval_setup
from wikiskill.loop.harness import Harness
from wikiskill.loop.steps.gate import Gate
from wikiskill.roles.agent import InteractiveAgent, QAAgent
from wikiskill.roles.judge import TEMPLATES as JUDGE_TEMPLATES  # in a judged suite's fingerprint
from wikiskill.roles.offline.agent import OfflineAgent
from wikiskill.roles.runners.builtin import BuiltinRunner
from wikiskill.roles.settings import AgentSettings
from wikiskill.roles.shell_agent import ShellAgent
from wikiskill.roles.tool_agent import ToolUseAgent
from wikiskill.store.rounds import rejected_tag, round_state
from wikiskill.store.settings import load_config
from wikiskill.store.trailers import Decision, Step
from wikiskill.store.workspace import MAIN

AGENT_SETTING_CHANGES = {
    "model": "openai/other-model",
    "temperature": 0.7,
    "max_tokens": 64,
    "tool_protocol": "text",
    "context_window": 4096,
    "max_steps": 6,
    "edit_format": "whole",
    "wiki_access": True,
    "runner": "python:json:dumps",  # any importable callable: the fingerprint digests its module's source
    "kind": "answer",  # named, though it is the one example-qa gets unnamed: a name enters as it is
}
"""A different value for each agent setting in the fingerprint."""
AGENT_SETTINGS_LEFT_OUT = {
    "api_base": "http://127.0.0.1:9/v1",  # where the model is served, not which model
    "response_format": "off",  # the task agent never asks for a JSON reply
    "timeout_s": 5,  # a limit on how long a CLI may take, as retries and timeouts are
    # CLI runners only: a CLI's fingerprint carries its argv and sandbox (test_cli_agents.py)
    "command": ["mycli", "{prompt}"],
    "sandbox": "bwrap",
}
"""A different value for each agent setting left out of the fingerprint, and why."""
NOT_AGENT_TEMPLATES = {
    "maintainer_system",
    "maintainer_user",
    "maintainer_retry",
    "proposer_system",
    "proposer_user",
    "report.html",
    "rubric_drafter_system",
    "rubric_drafter_user",
    "skill_writer_system",
    "skill_writer_user",
    "json_repair",
    "agent_cli",
}
"""Templates only the maintainer, the proposer, the report, the rubric drafter and uplift's skill
writer render, and the CLI runners' prompt (in the CLI's own digest, `roles/coding_agents/presets.py`)."""
AGENT_CODE = code_files(BuiltinRunner.code(AgentSettings()))
"""The built-in runner's code: its modules and what they import (`loop/fingerprint.py`)."""


@pytest.fixture()
def ws(tmp_path):
    return scripted_workspace(tmp_path / "ws")


def setup_id(ws, **overrides):
    config = load_config(ws.root)
    data = config.model_dump()
    for dotted, value in overrides.items():
        section, _, key = dotted.rpartition(".")
        (data[section] if section else data)[key] = value
    config = type(config).model_validate(data)
    return eval_setup(config, load_benchmark(config, ws.root), "val").id


def test_every_agent_setting_is_either_in_the_fingerprint_or_left_out_on_purpose():
    assert set(AgentSettings.model_fields) == AGENT_SETTING_CHANGES.keys() | AGENT_SETTINGS_LEFT_OUT.keys()
    assert set(AGENT_SETTINGS) == AGENT_SETTING_CHANGES.keys()


@pytest.mark.parametrize("setting", sorted(AGENT_SETTING_CHANGES))
def test_each_agent_setting_in_the_fingerprint_changes_it(ws, setting):
    assert setup_id(ws, **{f"agent.{setting}": AGENT_SETTING_CHANGES[setting]}) != setup_id(ws)


@pytest.mark.parametrize("setting", sorted(AGENT_SETTINGS_LEFT_OUT))
def test_each_agent_setting_left_out_leaves_the_fingerprint_alone(ws, setting):
    assert setup_id(ws, **{f"agent.{setting}": AGENT_SETTINGS_LEFT_OUT[setting]}) == setup_id(ws)


@pytest.mark.parametrize("change", [{"skills.mode": "index"}, {"seed": 1}, {"model": "openai/other-model"}])
def test_a_setting_that_decides_the_score_changes_the_fingerprint(ws, change):
    assert setup_id(ws, **change) != setup_id(ws)


@pytest.mark.parametrize(
    "change",
    [
        {"api_base": "http://127.0.0.1:9/v1"},
        {"llm.timeout": 5.0},
        {"llm.retries": 0},
        {"concurrency": 16},
        {"maintainer.model": "openai/other-model"},
        {"proposer.max_turns": 3},
        {"skills.locked": ["spell-letters"]},
        {"gate.review": "human"},
    ],
)
def test_how_a_score_is_obtained_leaves_the_fingerprint_alone(ws, change):
    assert setup_id(ws, **change) == setup_id(ws)


def test_the_split_and_its_tasks_are_part_of_the_setup(ws, tmp_path):
    config = load_config(ws.root)
    benchmark = load_benchmark(config, ws.root)
    assert eval_setup(config, benchmark, "val").id != eval_setup(config, benchmark, "test").id
    assert eval_setup(config, benchmark, "val", repeats=2).id != eval_setup(config, benchmark, "val").id


def test_an_edited_agent_prompt_template_is_a_new_fingerprint_and_reuses_no_result(ws, tmp_path, monkeypatch):
    world = WorldModel(ScriptedWorld())
    harness = Harness.open(ws, model_factory=lambda role: world)
    first = harness.evaluating.evaluate("main", "val", "first")
    calls = world.calls
    again = Harness.open(ws, model_factory=lambda role: world).evaluating.evaluate("main", "val", "again")
    assert again.evaluation == first.evaluation
    assert world.calls == calls  # the same fingerprint: every task came from the result cache

    prompts = tmp_path / "prompts"
    prompts.mkdir()
    for template in fingerprint.data_dir("prompts").glob("*.j2"):
        (prompts / template.name).write_text(template.read_text())
    (prompts / "agent_qa.j2").write_text((prompts / "agent_qa.j2").read_text() + "\nThink twice.\n")
    monkeypatch.setattr(fingerprint, "data_dir", lambda name: prompts)
    fingerprint.agent_prompts_digest.cache_clear()
    try:
        edited = Harness.open(ws, model_factory=lambda role: world).evaluating.evaluate("main", "val", "edited")
    finally:
        fingerprint.agent_prompts_digest.cache_clear()
    assert edited.evaluation.fingerprint != first.evaluation.fingerprint
    assert world.calls == calls + 6  # every val task ran again


def test_every_template_is_either_the_task_agents_or_another_roles():
    shipped = {path.name.removesuffix(".j2") for path in fingerprint.data_dir("prompts").glob("*.j2")}
    assert shipped == set(AGENT_TEMPLATES) | NOT_AGENT_TEMPLATES | set(JUDGE_TEMPLATES)
    assert not set(AGENT_TEMPLATES) & NOT_AGENT_TEMPLATES


def agent_modules() -> dict[str, ast.Module]:
    return {
        path.removesuffix(".py").replace("/", "."): ast.parse((fingerprint.PACKAGE / path).read_text())
        for path in AGENT_CODE
    }


def template_names(node: ast.expr) -> set[str]:
    """The template names a `render` call's first argument can take: a literal, or either branch
    of a conditional expression."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return template_names(node.body) | template_names(node.orelse)
    raise AssertionError(f"a template name this test cannot read: {ast.unparse(node)}")


def test_every_template_the_task_agents_code_renders_is_in_the_fingerprint():
    rendered = set()
    for tree in agent_modules().values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "render" and node.args:
                rendered |= template_names(node.args[0])
    assert rendered == set(AGENT_TEMPLATES)


def test_every_agent_is_built_from_code_in_the_fingerprint():
    modules = set(agent_modules())
    for agent in (QAAgent, InteractiveAgent, ToolUseAgent, ShellAgent, OfflineAgent):
        assert agent.__module__.removeprefix("wikiskill.") in modules


def test_every_module_the_task_agents_code_imports_is_in_the_fingerprint_or_left_out_on_purpose():
    modules = agent_modules()
    for name, tree in modules.items():
        package = name.rpartition(".")[0].split(".") if "." in name else []
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                imported = ".".join([*base, *(node.module or "").split(".")]).strip(".")
                assert imported in modules or imported in LEFT_OUT_CODE, f"{name} imports {imported}"


def test_the_task_agent_never_asks_for_a_json_reply_so_its_response_format_is_left_out():
    """`response_format` is sent only for `response_model` or `call_required` calls (see llm/call.py)."""
    calls = [
        node
        for tree in agent_modules().values()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("complete", "acomplete")
    ]
    assert calls and all(len(call.args) <= 2 and not call.keywords for call in calls)


@pytest.mark.parametrize("template", AGENT_TEMPLATES)
def test_editing_any_template_of_the_task_agent_changes_the_setup(ws, tmp_path, monkeypatch, template):
    before = setup_id(ws)
    prompts = tmp_path / "prompts"
    shutil.copytree(fingerprint.data_dir("prompts"), prompts)
    (prompts / f"{template}.j2").write_text((prompts / f"{template}.j2").read_text() + "\nThink twice.\n")
    monkeypatch.setattr(fingerprint, "data_dir", lambda name: prompts)
    fingerprint.agent_prompts_digest.cache_clear()
    try:
        assert setup_id(ws) != before
    finally:
        fingerprint.agent_prompts_digest.cache_clear()


@contextmanager
def agent_code_edited(tmp_path, monkeypatch, path: str):
    """The package as it would be with a comment added to its module `path`."""
    package = tmp_path / "wikiskill"
    shutil.copytree(fingerprint.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    (package / path).write_text((package / path).read_text() + "\n# changed\n")
    monkeypatch.setattr(fingerprint, "PACKAGE", package)
    fingerprint.agent_code_digest.cache_clear()
    try:
        yield
    finally:
        fingerprint.agent_code_digest.cache_clear()


@pytest.mark.parametrize("path", AGENT_CODE)
def test_editing_any_module_of_the_task_agent_changes_the_setup(ws, tmp_path, monkeypatch, path):
    before = setup_id(ws)
    with agent_code_edited(tmp_path, monkeypatch, path):
        assert setup_id(ws) != before


@pytest.mark.parametrize(
    "path",
    ["core/config.py", "core/section.py", "roles/settings.py", "knowledge/settings.py", "environments/settings.py"],
)
def test_editing_a_settings_model_leaves_the_agents_code_alone_as_its_settings_enter_one_by_one(
    ws, tmp_path, monkeypatch, path
):
    before = setup_id(ws)
    with agent_code_edited(tmp_path, monkeypatch, path):
        assert setup_id(ws) == before


def test_editing_a_module_only_the_built_in_agents_use_leaves_a_python_runners_setup_alone(ws, tmp_path, monkeypatch):
    python = {"agent.runner": "python:json:dumps"}
    before, built_in = setup_id(ws, **python), setup_id(ws)
    with agent_code_edited(tmp_path, monkeypatch, "roles/tool_agent.py"):
        assert setup_id(ws, **python) == before
        assert setup_id(ws) != built_in


SETUP_IN_A_PROCESS = """
from wikiskill.contracts.runners import runner_of
from wikiskill.roles.settings import AgentSettings
from wikiskill.loop.fingerprint import agent_code_digest

for runner in ("builtin", "python:json:dumps", "command", "oracle"):
    agent = AgentSettings(runner=runner, command=["mycli", "{prompt}"])
    print(runner, agent_code_digest(runner_of(agent).code(agent)))
"""


def test_the_runners_code_is_the_same_in_every_process():
    """The runner's code is found by walking imports; its digest must not follow the order a set
    of names happens to have in one process (string hashes differ by process)."""
    printed = {
        subprocess.run(
            [sys.executable, "-c", SETUP_IN_A_PROCESS],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in (1, 2, 3)
    }
    assert len(printed) == 1 and len(set(printed.pop().split())) == 8  # four runners, four digests


def test_a_workspace_evolved_by_older_agent_code_revalidates_its_incumbent_once_and_carries_on(
    ws, tmp_path, monkeypatch
):
    evolve_scripted(ws, rounds=1)
    old = [c for c in ws.log(MAIN) if c.meta.step == Step.BASELINE]
    with agent_code_edited(tmp_path, monkeypatch, "roles/agent.py"):
        result = evolve_scripted(ws, rounds=2)
    assert result.rounds_completed == 3
    revalidations = [c for c in ws.log(MAIN) if c.meta.step == Step.INCUMBENT]
    assert [c.meta.round for c in revalidations] == [2]
    assert revalidations[0].meta.score == pytest.approx(0.833, abs=1e-3)  # the merged skill still helps
    assert revalidations[0].meta.setup != old[0].meta.setup


def test_a_round_validated_by_older_agent_code_is_validated_again_before_its_gate(ws, tmp_path, monkeypatch):
    def killed(self, ctx, state):
        raise SystemExit("killed after the validation, before the gate")

    evolve_scripted(ws, rounds=1)
    with monkeypatch.context() as patch:
        patch.setattr(Gate, "run", killed)
        with pytest.raises(SystemExit):
            evolve_scripted(ws, rounds=1)
    branch = round_state(ws, 2).branch
    stale = ws.log(branch)[0].meta
    assert stale.step == Step.VALIDATE

    with agent_code_edited(tmp_path, monkeypatch, "llm/toolcalls.py"):
        evolve_scripted(ws, rounds=1)
    state = round_state(ws, 2)
    revalidated = next(c.meta for c in ws.log(MAIN) if c.meta.step == Step.INCUMBENT and c.meta.round == 2)
    assert revalidated.setup != stale.setup
    assert (state.gate.meta.decision, state.gate.meta.incumbent_fingerprint) == (
        Decision.REJECTED,
        revalidated.fingerprint,
    )
    validations = [c.meta for c in ws.log(rejected_tag(branch)) if c.meta.step == Step.VALIDATE]
    assert [meta.setup for meta in validations] == [revalidated.setup, stale.setup]  # newest first
