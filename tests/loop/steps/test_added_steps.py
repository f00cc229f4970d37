"""A plugin package adds a step to every round with no edit of wikiskill: a real package folder
with an entry point in `wikiskill.round_steps`, installed by pip into a folder on sys.path and
named in wikiskill.yaml's `steps`. The step is handed the same context as the built-in ones,
runs after the built-in step its `after` names, and resumes like them: `done` finds its commit."""

import sys
from pathlib import Path

import pytest
import yaml

from cli_errors import one_error_line, run
from inprocess import evolve_scripted, scripted_workspace
from plugin_packages import write_plugin
from wikiskill.core.errors import ConfigError
from wikiskill.core.parts import ROUND_STEP
from wikiskill.loop.steps import Gate, round_steps
from wikiskill.store.trailers import Step
from wikiskill.store.workspace import MAIN, Workspace

ENTRY_POINTS = {"wikiskill.round_steps": {"tally": "Tally", "nothing": "Nothing"}}

MODULE = '''
"""A step of a round, found by its entry point."""
from wikiskill.store.rounds import round_label
from wikiskill.store.trailers import Step, Trailers
from wikiskill.store.workspace import MAIN

RAN = []


class Tally:
    """After the rollout: raw/rNNN/tally.md, the train tasks the round played and those solved."""

    kind = Step.ADDED
    after = Step.ROLLOUT

    def path(self, state):
        return f"raw/{round_label(state.number)}/tally.md"

    def done(self, ctx, state):
        return ctx.reader.ws.read_file(MAIN, self.path(state)) is not None

    def run(self, ctx, state):
        RAN.append(state.number)
        results = ctx.reader.train_results(state.number)
        solved = sum(t.success for t in results)
        ctx.publisher.begin_step()
        ctx.publisher.commit(
            f"{round_label(state.number)} tally: {solved} of {len(results)} train tasks solved",
            Trailers(round=state.number, step=Step.ADDED),
            {self.path(state): f"{solved}/{len(results)}\\n"},
        )


class Nothing(Tally):
    """Also after the rollout; never runs."""

    def done(self, ctx, state):
        return True
'''


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory) -> Path:
    return write_plugin(tmp_path_factory.mktemp("plugin"), "acme-steps", ENTRY_POINTS, MODULE)


@pytest.fixture()
def installed(plugin_site, monkeypatch):
    monkeypatch.syspath_prepend(str(plugin_site))
    yield
    sys.modules.pop("acme_steps", None)


def with_steps(ws: Workspace, *names: str) -> None:
    path = ws.root / "wikiskill.yaml"
    path.write_text(yaml.safe_dump({**yaml.safe_load(path.read_text()), "steps": list(names)}))


def test_the_plugin_steps_are_listed_and_placed_after_the_step_they_name_in_the_order_named(installed):
    assert ROUND_STEP.names() == ["nothing", "tally"]
    kinds = [step.kind for step in round_steps(["tally"])]
    assert kinds[:3] == [Step.ROLLOUT, Step.ADDED, Step.MAINTAIN]
    assert [step.kind for step in round_steps()] == [kind for kind in kinds if kind is not Step.ADDED]
    for names in (["tally", "nothing"], ["nothing", "tally"]):
        assert [type(step).__name__ for step in round_steps(names)[1:3]] == [name.title() for name in names]


def test_evolve_runs_the_plugin_step_once_a_round_between_rollout_and_maintain(tmp_path, installed):
    import acme_steps

    ws = scripted_workspace(tmp_path / "ws")
    with_steps(ws, "tally")
    evolve_scripted(ws, rounds=2)
    assert acme_steps.RAN == [1, 2]
    tally = [c for c in ws.log(MAIN) if c.meta.step == Step.ADDED]
    assert [c.meta.round for c in tally] == [2, 1]
    solved, played = (int(n) for n in (ws.read_file(MAIN, "raw/r001/tally.md") or "").split("/"))
    assert tally[-1].subject == f"r001 tally: {solved} of {played} train tasks solved" and played > 0
    round_one = [c.meta.step for c in reversed(ws.log(MAIN)) if c.meta.round == 1]
    assert round_one[:3] == [Step.ROLLOUT, Step.ADDED, Step.MAINTAIN]
    assert tally[-1].meta.cost_usd == 0.0  # its commit carries its own cost, as every step's does


def test_a_run_killed_after_the_plugin_step_resumes_without_running_it_again(tmp_path, installed, monkeypatch):
    import acme_steps

    def killed(self, ctx, state):
        raise SystemExit("killed before the gate")

    ws = scripted_workspace(tmp_path / "ws")
    with_steps(ws, "tally")
    with monkeypatch.context() as patch:
        patch.setattr(Gate, "run", killed)
        with pytest.raises(SystemExit):
            evolve_scripted(ws, rounds=1)
    evolve_scripted(ws, rounds=1)
    assert acme_steps.RAN == [1]
    assert len([c for c in ws.log(MAIN) if c.meta.step == Step.ADDED]) == 1


def test_without_the_package_its_name_is_refused_in_one_line(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    with_steps(ws, "tally")
    assert "'tally' is no round step" in one_error_line(run("-C", str(ws.root), "status"))


OWN_STEPS = """
from wikiskill.store.trailers import Step


class Posing:
    kind = Step.GATE
    after = Step.ROLLOUT

    def done(self, ctx, state):
        return True

    def run(self, ctx, state):
        pass


class Lost(Posing):
    kind = Step.ADDED
    after = Step.HUMAN
"""


def test_a_step_of_ones_own_that_commits_as_a_built_in_one_or_follows_none_is_refused(tmp_path, monkeypatch):
    (tmp_path / "own_steps.py").write_text(OWN_STEPS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "own_steps", raising=False)
    with pytest.raises(
        ConfigError, match="'own_steps:Posing' commits as .*gate.*; a step of one's own commits as 'added'"
    ):
        round_steps(["own_steps:Posing"])
    with pytest.raises(ConfigError, match="'own_steps:Lost' runs after .*human.*, which is no step of a round"):
        round_steps(["own_steps:Lost"])
