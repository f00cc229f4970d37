"""Every verdict of the gate is sound: a merge was validated on exactly main's skills plus the
proposal, under the current settings, and scores what its commit claims. Each of the four
defects found when the gate trusted stale state is reproduced here on real git repositories."""

import shutil

import pytest
import yaml
from conftest import git
from scripted import SPELL, ScriptedWorld, create, skill_md
from test_workspace import WorldModel, evolve_scripted, scripted_workspace

from wikiskill import api
from wikiskill.errors import WorkspaceError
from wikiskill.evolve import evolve
from wikiskill.harness import Harness, QuietReporter
from wikiskill.history import round_state
from wikiskill.rollback import accepted_merges
from wikiskill.steps import round_steps
from wikiskill.steps.evaluation import Validate
from wikiskill.steps.gate import Gate
from wikiskill.trailers import Decision, Step
from wikiskill.workspace import MAIN, Workspace


def harness_for(ws: Workspace, world=None) -> Harness:
    model = WorldModel(world or ScriptedWorld())
    return Harness(ws, model_factory=lambda role: model)


def run_until(ws: Workspace, number: int, last: type, world=None) -> None:
    """Run round `number` up to and including the step `last`: the state a kill right after that
    step's commit leaves behind (each step is one atomic commit)."""
    harness = harness_for(ws, world)
    for step in round_steps():
        state = round_state(ws, number)
        if not step.done(harness, state):
            step.run(harness, state)
        if isinstance(step, last):
            return


def assert_every_merge_is_sound(ws: Workspace) -> None:
    """Each accepted merge on main: its trailers name the evaluation of exactly its own skills
    tree under the current setup, and re-running that evaluation gives the score it claims."""
    harness = harness_for(ws)
    for merge in accepted_merges(ws):
        assert merge.meta.skills_tree == ws.tree_id(merge.sha, "skills")
        assert merge.meta.fingerprint == harness.fingerprint(merge.sha), merge.subject
        shutil.rmtree(ws.state_dir / "results", ignore_errors=True)  # re-run, not read back
        assert harness.evaluate(merge.sha, "val", "re-check").evaluation.mean == pytest.approx(merge.meta.score)


def gate_of(ws: Workspace, number: int):
    return round_state(ws, number).gate


def edit_config(ws: Workspace, **changes) -> None:
    path = ws.root / "wikiskill.yaml"
    data = yaml.safe_load(path.read_text())
    for dotted, value in changes.items():
        section, key = dotted.split(".")
        data.setdefault(section, {})[key] = value
    path.write_text(yaml.safe_dump(data))


@pytest.fixture()
def after_round_one(tmp_path) -> Workspace:
    """Round 1 accepted spell-letters: val 0.500 -> 0.833."""
    ws = scripted_workspace(tmp_path / "ws")
    evolve_scripted(ws, rounds=1)
    assert gate_of(ws, 1).meta.decision == Decision.ACCEPTED
    return ws


def test_a_candidate_validated_before_a_rollback_is_revalidated_on_main_as_it_is_now(after_round_one):
    ws = after_round_one
    run_until(ws, 2, last=Validate)  # killed right after round 2's validate commit
    stale = round_state(ws, 2).validations[0]
    assert stale.meta.score == pytest.approx(5 / 6)  # useless-hint on top of spell-letters
    api.rollback(ws, "spell-letters")
    evolve_scripted(ws, rounds=1)
    gate = gate_of(ws, 2).meta
    assert (gate.decision, gate.incumbent, gate.score) == (Decision.REJECTED, 0.5, 0.5)  # not "0.833 > 0.500"
    steps = git(ws.root, "log", "--format=%(trailers:key=Wikiskill-Step,valueonly)", "rejected/r002-useless-hint").split()
    assert steps[:3] == ["validate", "reapply", "validate"]
    assert not (ws.root / "skills/useless-hint").exists()
    assert_every_merge_is_sound(ws)


def test_a_hand_edit_committed_mid_round_also_forces_a_revalidation(after_round_one):
    ws = after_round_one
    run_until(ws, 2, last=Validate)
    skill = ws.root / "skills/spell-letters/SKILL.md"
    skill.write_text(skill.read_text().replace(SPELL, "READ-CAREFULLY"))
    evolve_scripted(ws, rounds=1, commit_human_edits=True)
    gate = gate_of(ws, 2).meta
    assert (gate.decision, gate.incumbent, gate.score) == (Decision.REJECTED, 0.5, 0.5)
    assert_every_merge_is_sound(ws)


def test_the_gate_never_merges_a_validation_that_is_not_of_mains_skills_plus_the_proposal(after_round_one):
    ws = after_round_one
    run_until(ws, 2, last=Validate)
    api.rollback(ws, "spell-letters")
    harness = harness_for(ws)
    with pytest.raises(WorkspaceError, match="not of main's skills plus the proposal"):
        Gate().run(harness, round_state(ws, 2))  # what the old loop did: gate straight away
    assert gate_of(ws, 2) is None


def test_changed_settings_make_the_old_incumbent_score_void(after_round_one):
    ws = after_round_one
    edit_config(ws, **{"skills.mode": "index"})  # skill bodies leave the prompt: spell-letters stops helping
    evolve_scripted(ws, rounds=1)
    revalidated = [c for c in ws.log(MAIN) if c.meta.step == Step.BASELINE and c.meta.round == 2]
    assert len(revalidated) == 1 and revalidated[0].meta.score == pytest.approx(0.5)
    gate = gate_of(ws, 2).meta
    assert gate.incumbent == pytest.approx(0.5)  # not the 0.833 measured under the old settings
    assert gate.incumbent_fingerprint == revalidated[0].meta.fingerprint
    assert api.status(ws).incumbent == pytest.approx(0.5)


PERFECT = "PERFECT-MARKER"


class PerfectWorld(ScriptedWorld):
    """A skill carrying PERFECT makes every answer right: val 1.0."""

    def __init__(self):
        super().__init__({1: create("solve-all", PERFECT)})

    def answer(self, system: str, question: str) -> str:
        if PERFECT in system:
            from scripted import true_answer

            return f"<answer>{true_answer(question)}</answer>"
        return super().answer(system, question)


class DiesAfter(QuietReporter):
    def __init__(self, line: str):
        self.line = line

    def info(self, message: str) -> None:
        if self.line in message:
            raise SystemExit("killed")


def test_a_round_whose_gate_merged_a_perfect_score_is_finished_before_stopping(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    model = WorldModel(PerfectWorld())
    with pytest.raises(SystemExit):  # killed right after the gate's merge, before the round's tag
        evolve(Harness(ws, reporter=DiesAfter("gate: accepted"), model_factory=lambda role: model), 3)
    assert "round/001" not in ws.refs("refs/tags/round/")
    result = evolve(Harness(ws, model_factory=lambda role: model), 3)
    assert result.rounds_completed == 1 and result.stopped_early and result.incumbent == 1.0
    assert "round/001" in ws.refs("refs/tags/round/")
    assert api.status(ws).rounds == 1
    assert not ws.refs("refs/heads/skill/")


def merge_change(ws: Workspace, name: str, round_number: int, marker: str) -> str:
    """An accepted gate merge of round `round_number` that writes skills/<name>/ with `marker`."""
    from wikiskill.trailers import Trailers, format_message

    branch = f"skill/r{round_number:03d}-{name}"
    ws.create_branch(branch, MAIN)
    tip = ws.commit({f"skills/{name}/SKILL.md": skill_md(name, marker),
                     f"skills/{name}/PURPOSE.md": f"# {name}\n\n## Evolution History\n- r{round_number:03d} {marker}\n"},
                    format_message(f"r{round_number} propose", Trailers(round=round_number, step=Step.PROPOSE)),
                    branch=branch)
    sha = ws.commit({}, format_message(f"r{round_number} gate: accepted {name}", Trailers(
        round=round_number, step=Step.GATE, decision=Decision.ACCEPTED, action="patch", skill=name)),
        base=ws.merged_tree(MAIN, tip), extra_parents=(tip,))
    ws.delete_branch(branch)
    return sha


@pytest.fixture()
def created_then_patched(tmp_path) -> Workspace:
    ws = scripted_workspace(tmp_path / "ws")
    merge_change(ws, "spell-letters", 2, "CREATED")
    merge_change(ws, "spell-letters", 3, "PATCHED")
    return ws


def test_rolling_back_a_skill_reverts_all_its_changes_in_one_commit(created_then_patched):
    ws = created_then_patched
    head = ws.head()
    result = api.rollback(ws, "spell-letters")
    assert [c.meta.round for c in result.reverted] == [3, 2]
    assert ws.log(MAIN)[0].parents == (head,)  # one commit
    assert not (ws.root / "skills/spell-letters").exists()
    assert git(ws.root, "status", "--porcelain") == ""
    assert ws.log(MAIN)[0].meta.reverted == [c.sha for c in result.reverted]
    assert accepted_merges(ws) == []


def test_rolling_back_an_earlier_round_refuses_and_writes_nothing(created_then_patched):
    ws = created_then_patched
    head = ws.head()
    with pytest.raises(WorkspaceError, match=r"round 2 .*changed after it in round 3 \(patch spell-letters\)"):
        api.rollback(ws, round_number=2)
    assert ws.head() == head and git(ws.root, "status", "--porcelain") == ""
    api.rollback(ws, round_number=3)
    assert "CREATED" in (ws.root / "skills/spell-letters/SKILL.md").read_text()
    api.rollback(ws, round_number=2)  # now the later change is undone, the earlier one can go
    assert not (ws.root / "skills/spell-letters").exists()
