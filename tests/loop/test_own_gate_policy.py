"""A gate policy with a setting of its own is one module: a plugin package's batched policy reads
`gate.min_fixed` from wikiskill.yaml, records it on its looks and gate commit, and `audit` replays
its verdict from what the commit records, with no other file of wikiskill changed. A policy
written before policies declared what they are still loads, with `BasePolicy`'s defaults."""

import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from cli_errors import one_error_line, run
from inprocess import evolve_scripted
from plugin_packages import write_plugin
from scripted import reversal_suite
from wikiskill import api
from wikiskill.contracts.gate import GATE_POLICIES
from wikiskill.loop.fingerprint import digest
from wikiskill.loop.settings import GateSettings
from wikiskill.store.evaluations import skills_id
from wikiskill.store.rounds import round_state
from wikiskill.store.trailers import Step, format_message
from wikiskill.store.workspace import MAIN, Workspace
from workspaces import UNUSED_SERVER

MODULE = '''
"""A gate policy of one's own, with a setting of its own."""
from pydantic import BaseModel, Field

from wikiskill.contracts.gate import Verdict
from wikiskill.loop.sequential import SequentialPolicy
from wikiskill.store.trailers import Decision


class AtLeastFixed(SequentialPolicy):
    """Sequential, and a merge must newly solve at least `gate.min_fixed` of the val tasks used."""

    name = "at-least-fixed"

    class Settings(BaseModel):
        min_fixed: int = Field(1, ge=0)
        """The fewest val tasks a merge must newly solve."""

    @classmethod
    def from_settings(cls, settings):
        policy = super().from_settings(settings)
        policy.min_fixed = settings.own(cls.Settings).min_fixed
        return policy

    def trailers(self):
        return {"min_fixed": self.min_fixed}

    def judge_looks(self, candidate, incumbent, pool, at_least=False):
        verdict = super().judge_looks(candidate, incumbent, pool, at_least)
        fixed = len(verdict.evidence.fixed)
        if verdict.decision == Decision.ACCEPTED and fixed < self.min_fixed:
            why = f"{verdict.reason}; but only {fixed} task(s) newly solved (gate.min_fixed {self.min_fixed})"
            return Verdict(Decision.REJECTED, why, verdict.evidence)
        return verdict
'''

BARE = '''
from wikiskill.loop.gate_policies import StrictPolicy


class Bare:
    """A policy that declares nothing of itself: strict's verdicts."""

    name = "bare"

    @classmethod
    def from_settings(cls, settings):
        return cls()

    def plan(self):
        return StrictPolicy().plan()

    def judge(self, candidate, incumbent, at_least=False):
        return StrictPolicy().judge(candidate, incumbent, at_least)
'''


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory) -> Path:
    return write_plugin(
        tmp_path_factory.mktemp("plugin"),
        "fixed-gates",
        {"wikiskill.gate_policies": {"at-least-fixed": "AtLeastFixed"}},
        MODULE,
    )


@pytest.fixture(scope="module")
def installed(plugin_site):
    sys.path.insert(0, str(plugin_site))
    yield
    sys.path.remove(str(plugin_site))
    sys.modules.pop("fixed_gates", None)


def own_policy_workspace(root: Path, **gate: object) -> Workspace:
    """A pool of 40 val reversals in batches of 5, under the plugin's policy."""
    suite = reversal_suite(root / "suite", 40)
    ws = api.init_workspace(
        root / "ws", benchmark=f"jsonl:{suite}", model="openai/scripted", api_base=UNUSED_SERVER, concurrency=4
    )
    config = yaml.safe_load((ws.root / "wikiskill.yaml").read_text())
    config["gate"] = {"policy": "at-least-fixed", "batch": 5, **gate}
    (ws.root / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    return ws


@pytest.fixture(scope="module")
def evolved(tmp_path_factory, installed):
    """Round 1's spelling skill fixes every val task: sequential accepts it at look 3, on 15 tasks."""
    ws = own_policy_workspace(tmp_path_factory.mktemp("own"), min_fixed=10)
    assert evolve_scripted(ws, rounds=1).decisions == ["accepted"]
    return ws


def test_the_policys_own_setting_is_recorded_on_each_look_and_on_the_gate_commit(evolved):
    state = round_state(evolved, 1)
    assert (state.gate.meta.policy, state.gate.meta.look, state.gate.meta.tasks) == ("at-least-fixed", 3, 15)
    assert state.gate.meta.policy_settings == {"min_fixed": "10"}
    looks = [c for c in evolved.log(state.gate.parents[1]) if c.meta.round == 1 and c.meta.step is Step.VALIDATE]
    assert len(looks) == 3 and all(c.meta.policy_settings == {"min_fixed": "10"} for c in looks)


def test_the_policys_own_setting_decides_the_round(tmp_path, installed):
    ws = own_policy_workspace(tmp_path, min_fixed=20)
    assert evolve_scripted(ws, rounds=1).decisions == ["rejected"]
    gate = round_state(ws, 1).gate
    assert "but only 15 task(s) newly solved (gate.min_fixed 20)" in gate.subject + ws.body(gate.sha)


def test_audit_replays_the_verdict_with_the_setting_its_commit_records(evolved):
    assert api.audit(evolved).problems == []
    merge = round_state(evolved, 1).gate
    # the same merge again, on main's skills as they are, claiming it ran with min_fixed 20
    incumbent = digest([merge.meta.setup, skills_id(evolved, MAIN)])
    claims = merge.meta.model_copy(update={"round": 2, "incumbent_fingerprint": incumbent, "Policy-Min-Fixed": "20"})
    evolved.commit(
        {},
        format_message("r2 gate: accepted spell-letters", claims),
        base=evolved.tree_id(merge.sha, ""),
        extra_parents=(merge.parents[1],),
    )
    assert api.audit(evolved).problems == [
        "round 2 (spell-letters, " + evolved.head(MAIN)[:10] + "): claims accepted at look 3 on "
        "15 tasks; its committed results give rejected at look 3 on 15 tasks"
    ]


def test_the_own_setting_is_checked_where_it_is_written(tmp_path, installed):
    ws = own_policy_workspace(tmp_path, min_fixed=-1)
    line = (ws.root / "wikiskill.yaml").read_text().splitlines().index("  min_fixed: -1") + 1
    error = one_error_line(run("-C", str(ws.root), "status"))
    assert f"line {line}" in error and "gate.min_fixed: Input should be greater than or equal to 0" in error


def test_another_policy_refuses_the_setting_as_an_unknown_one(installed):
    with pytest.raises(ValueError, match="min_fixed") as refused:
        GateSettings.model_validate({"policy": "sequential", "min_fixed": 3})
    assert refused.value.errors()[0]["type"] == "extra_forbidden"
    assert (
        GateSettings.model_validate({"policy": "at-least-fixed", "min_fixed": 3})
        .own(GATE_POLICIES.load("at-least-fixed").Settings)
        .min_fixed
        == 3
    )


def test_a_policy_that_declares_nothing_of_itself_loads_with_the_defaults(tmp_path, monkeypatch):
    (tmp_path / "bare_gates.py").write_text(textwrap.dedent(BARE))
    monkeypatch.syspath_prepend(str(tmp_path))
    policy = GATE_POLICIES.load("bare_gates:Bare")
    assert policy.name == "bare" and policy.has_level is False and policy.from_settings(GateSettings()).trailers() == {}
    with pytest.raises(ValueError, match=r"alpha_budget needs a policy with a confidence level \(paired, sequential\)"):
        GateSettings(policy="bare_gates:Bare", alpha_budget=0.05)
