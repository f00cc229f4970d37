"""Every verdict of the gate is sound: a merge was validated on exactly main's skills plus the
proposal, under the current settings, and scores what its commit claims. Each of the four
defects found when the gate trusted stale state is reproduced here on real git repositories."""

import importlib
import json
import shutil
from pathlib import Path

import pytest

from conftest import git
from inprocess import DiesAfter, WorldModel, evolve_scripted, merge_change, scripted_harness, scripted_workspace
from scripted import SPELL, ScriptedWorld, create, skill_md
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.core.errors import ValidationIndecisive, WikiskillError, WorkspaceError
from wikiskill.history.rollback import accepted_merges
from wikiskill.loop.evolve import evolve
from wikiskill.loop.harness import Harness
from wikiskill.loop.steps import round_steps
from wikiskill.loop.steps.evaluation import EnsureIncumbent, Validate
from wikiskill.loop.steps.gate import Gate
from wikiskill.store.rounds import round_state
from wikiskill.store.trailers import Decision, Step
from wikiskill.store.workspace import MAIN, Workspace
from workspaces import UNUSED_SERVER, edit_config, gate_of


def run_until(ws: Workspace, number: int, last: type, world=None, occurrence: int | None = None) -> None:
    """Run round `number` up to and including the step `last` (the one at index `occurrence` of
    the round's steps, when given): the state a kill right after that step's commit leaves
    behind, since each step is one atomic commit."""
    harness = scripted_harness(ws, world)
    for index, step in enumerate(round_steps()):
        state = round_state(ws, number)
        if state.closed:
            return
        if not step.done(harness.steps, state):
            step.run(harness.steps, state)
        if isinstance(step, last) and occurrence in (None, index):
            return


def assert_every_merge_is_sound(ws: Workspace) -> None:
    """Each accepted merge on main (rolled back or not) records an evaluation of exactly its own
    skills tree against an incumbent of the same setup, and re-running it gives the claimed score."""
    model = WorldModel(ScriptedWorld())
    report = api.audit(ws, rerun=True, options=RunOptions(model_factory=lambda role: model))
    assert report.merges and report.problems == []
    assert report.rerun == len(report.merges)


@pytest.fixture(scope="module")
def round_one_base(tmp_path_factory) -> Workspace:
    """Round 1 accepted spell-letters: val 0.500 -> 0.833. Tests change a copy of it."""
    ws = scripted_workspace(tmp_path_factory.mktemp("base") / "ws")
    evolve_scripted(ws, rounds=1)
    return ws


@pytest.fixture()
def after_round_one(round_one_base, tmp_path) -> Workspace:
    shutil.copytree(round_one_base.root, tmp_path / "ws")
    ws = Workspace(tmp_path / "ws")
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
    steps = git(
        ws.root,
        "log",
        "--first-parent",
        "--format=%(trailers:key=Wikiskill-Step,valueonly)",
        "rejected/r002-useless-hint",
    ).split()
    assert steps[:3] == ["validate", "reapply", "validate"]
    assert not (ws.root / "skills/useless-hint").exists()
    assert_every_merge_is_sound(ws)


def hand_edit(ws: Workspace) -> dict:
    skill = ws.root / "skills/spell-letters/SKILL.md"
    skill.write_text(skill.read_text().replace(SPELL, "READ-CAREFULLY"))
    return {"commit_human_edits": True}


def roll_back(ws: Workspace) -> dict:
    api.rollback(ws, "spell-letters")
    return {}


@pytest.mark.slow
@pytest.mark.parametrize("intervention", [roll_back, hand_edit])
@pytest.mark.parametrize("stop_after", range(len(round_steps())))
def test_a_run_stopped_after_any_step_then_changed_by_hand_resumes_to_sound_merges(
    round_one_base, tmp_path, stop_after, intervention
):
    shutil.copytree(round_one_base.root, tmp_path / "ws")
    ws = Workspace(tmp_path / "ws")
    run_until(ws, 2, last=type(round_steps()[stop_after]), occurrence=stop_after)
    options = intervention(ws)
    evolve_scripted(ws, rounds=2, **options)
    assert api.status(ws).rounds == 3
    assert not any(c.meta.skill == "useless-hint" and c.meta.decision == Decision.ACCEPTED for c in ws.log(MAIN))
    assert git(ws.root, "status", "--porcelain") == "" and not ws.refs("refs/heads/skill/")
    assert_every_merge_is_sound(ws)


def test_a_hand_edit_committed_mid_round_also_forces_a_revalidation(after_round_one):
    ws = after_round_one
    run_until(ws, 2, last=Validate)
    evolve_scripted(ws, rounds=1, **hand_edit(ws))
    gate = gate_of(ws, 2).meta
    assert (gate.decision, gate.incumbent, gate.score) == (Decision.REJECTED, 0.5, 0.5)
    assert_every_merge_is_sound(ws)


def test_the_gate_never_merges_a_validation_that_is_not_of_mains_skills_plus_the_proposal(after_round_one):
    ws = after_round_one
    run_until(ws, 2, last=Validate)
    api.rollback(ws, "spell-letters")
    harness = scripted_harness(ws)
    with pytest.raises(WorkspaceError, match="not of main's skills plus the proposal"):
        Gate().run(harness.steps, round_state(ws, 2))  # what the old loop did: gate straight away
    assert gate_of(ws, 2) is None


def test_changed_settings_make_the_old_incumbent_score_void(after_round_one):
    ws = after_round_one
    edit_config(ws, **{"skills.mode": "index"})  # skill bodies leave the prompt: spell-letters stops helping
    evolve_scripted(ws, rounds=1)
    revalidated = [c for c in ws.log(MAIN) if c.meta.step == Step.INCUMBENT and c.meta.round == 2]
    assert len(revalidated) == 1 and revalidated[0].meta.score == pytest.approx(0.5)
    gate = gate_of(ws, 2).meta
    assert gate.incumbent == pytest.approx(0.5)  # not the 0.833 measured under the old settings
    assert gate.incumbent_fingerprint == revalidated[0].meta.fingerprint
    assert api.status(ws).incumbent == pytest.approx(0.5)


def test_each_step_of_a_round_publishes_its_commit_under_its_kind(after_round_one):
    ws = after_round_one
    edit_config(ws, **{"skills.mode": "index"})  # main's incumbent must be re-validated
    harness = scripted_harness(ws)
    published = []
    for step in round_steps():
        state = round_state(ws, 2)
        if state.closed or step.done(harness.steps, state):
            continue
        before = {c.sha for c in ws.log("--all", first_parent=False)}
        step.run(harness.steps, state)
        new = [c for c in ws.log("--all", first_parent=False) if c.sha not in before]
        assert [c.meta.step for c in new] == [step.kind]
        published.append(step.kind)
    assert published == [Step.ROLLOUT, Step.MAINTAIN, Step.INCUMBENT, Step.PROPOSE, Step.VALIDATE, Step.GATE]


def test_a_revalidation_an_older_wikiskill_recorded_as_baseline_is_still_mains_incumbent(after_round_one, monkeypatch):
    ws = after_round_one
    edit_config(ws, **{"skills.mode": "index"})
    with monkeypatch.context() as older:
        older.setattr(EnsureIncumbent, "kind", Step.BASELINE)  # how re-validations were committed before
        evolve_scripted(ws, rounds=1)
    revalidated = [c.meta for c in ws.log(MAIN) if c.meta.step == Step.BASELINE and c.meta.round == 2]
    assert len(revalidated) == 1 and revalidated[0].score == pytest.approx(0.5)
    evolve_scripted(ws, rounds=1)
    assert not [c for c in ws.log(MAIN) if c.meta.step == Step.INCUMBENT]  # found, not evaluated again
    assert gate_of(ws, 3).meta.incumbent == pytest.approx(0.5)
    assert api.status(ws).incumbent == pytest.approx(0.5)
    assert [(row.round, row.decision) for row in api.round_log(ws)] == [
        (1, "accepted"),
        (2, "rejected"),
        (3, "no_action"),
    ]
    assert api.show_round(ws, 3).incumbent == pytest.approx(0.5)


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


def test_a_round_whose_gate_merged_a_perfect_score_is_finished_before_stopping(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    model = WorldModel(PerfectWorld())
    with pytest.raises(SystemExit):  # killed right after the gate's merge, before the round's tag
        evolve(Harness.open(ws, reporter=DiesAfter("gate: accepted"), model_factory=lambda role: model), 3)
    assert "round/001" not in ws.refs("refs/tags/round/")
    result = evolve(Harness.open(ws, model_factory=lambda role: model), 3)
    assert result.rounds_completed == 1 and result.stopped_early and result.incumbent == 1.0
    assert "round/001" in ws.refs("refs/tags/round/")
    assert api.status(ws).rounds == 1
    assert not ws.refs("refs/heads/skill/")


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


class FailingProvider(ScriptedWorld):
    """The provider fails for good (after retries) while the round-2 candidate is validated,
    until `healed`."""

    healed = False

    def answer(self, system: str, question: str) -> str:
        from scripted import USELESS
        from wikiskill.core.errors import ModelError

        if USELESS in system and not self.healed:
            raise ModelError("openai/scripted: 503 Service Unavailable after 4 retries")
        return super().answer(system, question)


def test_a_validation_the_provider_cut_short_is_indecisive_and_retried(after_round_one):
    ws = after_round_one
    world = FailingProvider()
    with pytest.raises(ValidationIndecisive, match="r002's validate could not complete .*503"):
        evolve_scripted(ws, rounds=1, world=world)
    state = round_state(ws, 2)
    assert state.gate is None and state.branch == "skill/r002-useless-hint"
    indecisive = ws.log(state.branch)[0].meta
    assert (indecisive.step, indecisive.decision, indecisive.fingerprint) == (Step.VALIDATE, Decision.INDECISIVE, None)
    world.healed = True
    result = evolve_scripted(ws, rounds=1, world=world)
    assert result.rounds_completed == 2
    gate = gate_of(ws, 2).meta
    assert gate.decision == Decision.REJECTED and gate.score == pytest.approx(5 / 6)  # a real verdict now


def test_policy_and_evidence_are_recorded_in_the_gate_commit_and_the_impact_entry(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    edit_config(ws, **{"gate.policy": "paired"})
    evolve_scripted(ws, rounds=1)
    gate = gate_of(ws, 1)
    # 2 of 6 val tasks fixed and none broken: a sign test cannot call that evidence (p = 0.25)
    assert (gate.meta.decision, gate.meta.policy, gate.meta.tasks) == (Decision.REJECTED, "paired", 6)
    assert (gate.meta.fixed, gate.meta.broken, gate.meta.p_value) == (2, 0, 0.25)
    assert gate.meta.mean_diff == pytest.approx(2 / 6)
    impact = (ws.root / "wiki/skill-impact.md").read_text()
    assert "- Policy: paired (n = 6 tasks, mean difference +0.3333)" in impact and "- p-value: 0.2500" in impact
    assert "- Effect: helped 2 val task(s) (2 newly solved), hurt 0 (0 no longer solved)" in impact


def test_confirm_runs_a_passing_candidate_again_with_fresh_seeds(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    edit_config(ws, **{"gate.policy": "confirm"})
    evolve_scripted(ws, rounds=2)
    accepted = git(ws.root, "log", "--format=%(trailers:key=Wikiskill-Step,valueonly)", "round/001^2").split()
    assert accepted[:3] == ["confirm", "validate", "propose"]
    assert "confirmed: val 0.833 > incumbent 0.500" in gate_of(ws, 1).subject + ws.body(gate_of(ws, 1).sha)
    tie = git(ws.root, "log", "--format=%(trailers:key=Wikiskill-Step,valueonly)", "rejected/r002-useless-hint").split()
    assert tie[0] == "validate"  # a candidate that fails its validation is not confirmed


def test_repeats_average_each_task_over_several_seeded_runs(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    edit_config(ws, **{"gate.repeats": 3})
    evolve_scripted(ws, rounds=1)
    rows = [json.loads(line) for line in (ws.root / "raw/r001/val.jsonl").read_text().splitlines()]
    assert all(len(row["scores"]) == 3 for row in rows)
    assert len(list((ws.state_dir / "results").iterdir())) == 3 + 3 + 1  # baseline x3, candidate x3, train


def test_audit_flags_a_merge_whose_commit_claims_more_than_its_evidence(after_round_one):
    from typer.testing import CliRunner

    from wikiskill.cli import app
    from wikiskill.store.trailers import format_message

    ws = after_round_one
    runner = CliRunner()
    clean = runner.invoke(app, ["-C", str(ws.root), "audit"])
    assert clean.exit_code == 0 and "1 accepted merge(s) audited: every one is sound" in clean.output
    merge = gate_of(ws, 1)
    claims = merge.meta.model_copy(update={"score": 0.9, "round": 2})
    branch = "skill/r002-x"
    ws.create_branch(branch, MAIN)
    tip = ws.commit({"skills/x/SKILL.md": skill_md("x", "X")}, "r2 propose x\n", branch=branch)
    ws.commit({}, format_message("r2 gate: accepted x", claims), base=ws.merged_tree(MAIN, tip), extra_parents=(tip,))
    ws.delete_branch(branch)
    flagged = runner.invoke(app, ["-C", str(ws.root), "audit"])
    assert flagged.exit_code == 1
    assert "round 2 (spell-letters" in flagged.output
    assert (
        "are not the merged ones" in flagged.output
        and "claims val 0.900, its results file gives 0.833" in flagged.output
    )


def test_a_retire_is_merged_at_an_equal_score_and_a_harmful_one_is_not(after_round_one):
    from scripted import USELESS

    ws = after_round_one
    (ws.root / "skills/useless-hint").mkdir()
    (ws.root / "skills/useless-hint/SKILL.md").write_text(skill_md("useless-hint", USELESS))
    retire = {"action": "retire", "rationale": "it changes nothing"}
    world = ScriptedWorld({2: {**retire, "name": "useless-hint"}, 3: {**retire, "name": "spell-letters"}})
    evolve_scripted(ws, rounds=2, world=world, commit_human_edits=True)
    equal = gate_of(ws, 2).meta
    assert (equal.decision, equal.action) == (Decision.ACCEPTED, "retire")
    assert equal.score == equal.incumbent == pytest.approx(5 / 6)
    assert not (ws.root / "skills/useless-hint").exists()
    harmful = gate_of(ws, 3).meta
    assert (harmful.decision, harmful.score) == (Decision.REJECTED, 0.5)
    assert (ws.root / "skills/spell-letters/SKILL.md").exists()
    assert_every_merge_is_sound(ws)


EXAMPLE_QA = Path(__file__).resolve().parents[2] / "benchmarks" / "example-qa"
LETTERS_IN_PLACE = """
def score(prediction, answer):
    prediction = prediction or ""
    return sum(a == b for a, b in zip(prediction.strip(), answer)) / len(answer)
"""


def graded_workspace(tmp_path: Path, monkeypatch, scorer: str, val_ids: list[str]) -> Workspace:
    """example-qa's tasks as a `jsonl:` suite whose validation keeps `val_ids`, scored by the
    `score` function of the module `scorer` (written to disk and imported as a user's scorer is)."""
    module = f"scorer_{tmp_path.name}"
    (tmp_path / "scorers").mkdir()
    (tmp_path / "scorers" / f"{module}.py").write_text(scorer)
    monkeypatch.syspath_prepend(str(tmp_path / "scorers"))
    suite = tmp_path / "suite"
    suite.mkdir()
    for split in ("train", "test"):
        shutil.copy(EXAMPLE_QA / f"{split}.jsonl", suite)
    rows = [line for line in (EXAMPLE_QA / "val.jsonl").read_text().splitlines() if json.loads(line)["id"] in val_ids]
    (suite / "val.jsonl").write_text("\n".join(rows) + "\n")
    (suite / "suite.json").write_text(json.dumps({"scorer": f"{module}:score"}))
    return api.init_workspace(
        tmp_path / "ws", benchmark=f"jsonl:{suite}", model="openai/scripted", api_base=UNUSED_SERVER, concurrency=4
    )


def test_a_paired_gate_on_one_graded_validation_task_rejects_and_says_one_task_cannot_show_a_gain(
    tmp_path, monkeypatch
):
    ws = graded_workspace(tmp_path, monkeypatch, LETTERS_IN_PLACE, ["val-01"])  # reverse 'tattoo'
    edit_config(ws, **{"gate.policy": "paired"})
    evolve_scripted(ws, rounds=1)
    gate = gate_of(ws, 1)
    assert (gate.meta.decision, gate.meta.tasks) == (Decision.REJECTED, 1)
    assert (gate.meta.incumbent, gate.meta.score) == (pytest.approx(2 / 6), 1.0)  # 'tattoo' has 2 letters in place
    assert (
        "1 of 1 task(s) differ from a gain of 0: too few to show a gain above it at 0.95 "
        "(a sign-flip test's p cannot go below 0.5000)"
    ) in ws.body(gate.sha)


def test_a_score_that_is_not_a_number_stops_the_evaluation_in_one_line_and_a_fixed_scorer_resumes(
    tmp_path, monkeypatch
):
    ws = graded_workspace(
        tmp_path,
        monkeypatch,
        "BROKEN = True\n\n"
        + LETTERS_IN_PLACE.replace(
            "    prediction = ", "    if BROKEN and answer == 'oottat':\n        return float('nan')\n    prediction = "
        ),
        ["val-00", "val-01"],
    )
    head = ws.head()
    with pytest.raises(WikiskillError, match=r"^1 task\(s\) scored no finite number \(val-01: nan\)"):
        evolve_scripted(ws, rounds=1)
    assert ws.head() == head  # nothing recorded
    importlib.import_module(f"scorer_{tmp_path.name}").BROKEN = False
    evolve_scripted(ws, rounds=1)
    assert gate_of(ws, 1).meta.incumbent == pytest.approx((1 + 2 / 6) / 2)
