"""`audit` checks each accepted merge on main against the records it commits: a merge forged
with one trailer changed (or left out) is named with the one problem that change makes; a rerun
under another world flags the score it cannot reproduce. It also names the `skill/` branch of a
round its gate already decided, and the next `evolve` deletes it (the kill that leaves one is
tests/e2e/test_kill_gate.py's)."""

import json
import shutil

import pytest

from conftest import git
from inprocess import WorldModel, evolve_scripted, scripted_workspace
from scripted import ScriptedWorld, reversal_suite
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.loop.fingerprint import digest
from wikiskill.store.evaluations import skills_id
from wikiskill.store.trailers import format_message
from wikiskill.store.workspace import MAIN, Workspace
from workspaces import UNUSED_SERVER, edit_config


def test_a_decided_rounds_branch_is_named_by_audit_and_deleted_by_the_next_evolve(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    evolve_scripted(ws, rounds=2)
    rejected = git(ws.root, "rev-parse", "rejected/r002-useless-hint").strip()
    git(ws.root, "update-ref", "refs/heads/skill/r002-useless-hint", rejected)  # what a kill left
    assert api.audit(ws).problems == [
        "branch skill/r002-useless-hint is left over: round 2's gate decided it; the next `wikiskill evolve` deletes it"
    ]
    evolve_scripted(ws, rounds=1)
    assert git(ws.root, "for-each-ref", "refs/heads/skill/") == ""
    assert api.audit(ws).problems == []


@pytest.fixture(scope="module")
def accepted(tmp_path_factory) -> Workspace:
    """Round 1 merged spell-letters under `strict` (val 0.500 -> 0.833): main's head is its merge."""
    ws = scripted_workspace(tmp_path_factory.mktemp("accepted") / "ws")
    assert evolve_scripted(ws, rounds=1).decisions == ["accepted"]
    return ws


def forged(tmp_path, ws: Workspace, drop: tuple[str, ...] = (), merge: bool = True, **trailers: str) -> Workspace:
    """A copy of `ws` whose head merge on main gives the trailers `Wikiskill-<key>: value` instead
    (key: the trailer's name after the prefix, `_` for `-`; added when it has none), has those in
    `drop` left out, or is not a merge (its first parent alone)."""
    shutil.copytree(ws.root, tmp_path / "forged", symlinks=True)
    copy = api.open_workspace(tmp_path / "forged")
    head = copy.log(MAIN)[0]
    lines = git(copy.root, "log", "-1", "--format=%B", head.sha).splitlines()
    names = {key.replace("_", "-"): value for key, value in trailers.items()}
    for key, value in names.items():
        at = next((i for i, line in enumerate(lines) if line.startswith(f"Wikiskill-{key}: ")), None)
        if at is None:  # a trailer the merge does not give: added after the last
            at = max(i for i, line in enumerate(lines) if line.startswith("Wikiskill-")) + 1
            lines.insert(at, "")
        lines[at] = f"Wikiskill-{key}: {value}"
    lines = [line for line in lines if not line.startswith(tuple(f"Wikiskill-{key}: " for key in drop))]
    parents = [arg for parent in (head.parents if merge else head.parents[:1]) for arg in ("-p", parent)]
    sha = git(copy.root, "commit-tree", f"{head.sha}^{{tree}}", *parents, "-m", "\n".join(lines)).strip()
    git(copy.root, "update-ref", "refs/heads/main", sha, head.sha)
    return api.open_workspace(copy.root)


def problems(ws: Workspace) -> list[str]:
    """`audit`'s problems with round 1's merge, each without its label."""
    label = f"round 1 ({ws.log(MAIN)[0].meta.skill}, {ws.head(MAIN)[:10]}): "
    found = api.audit(ws).problems
    assert all(problem.startswith(label) for problem in found), found
    return [problem.removeprefix(label) for problem in found]


def test_the_merge_as_evolve_committed_it_is_sound(accepted):
    report = api.audit(accepted)
    assert report.problems == [] and [merge.sha for merge in report.merges] == [accepted.head(MAIN)]
    assert report.rerun == 0


def test_an_accepted_gate_commit_that_is_not_a_merge_is_named(tmp_path, accepted):
    assert problems(forged(tmp_path, accepted, merge=False)) == ["an accepted gate commit that is not a merge"]


@pytest.mark.parametrize("trailer", ["Fingerprint", "Eval-Setup", "Skills-Id", "Results"])
def test_a_merge_without_one_of_its_evaluations_records_is_named(tmp_path, accepted, trailer):
    assert problems(forged(tmp_path, accepted, drop=(trailer,))) == ["records no evaluation fingerprint"]


def test_a_merge_claiming_other_skills_than_it_merged_is_named(tmp_path, accepted):
    merged = accepted.log(MAIN)[0].meta.skills_id
    found = problems(forged(tmp_path, accepted, Skills_Id="0123456789abcdef01234567"))
    assert found == [
        f"validated skills 0123456789 are not the merged ones {merged[:10]}",
        "its fingerprint is not of its setup and skills",
    ]


def test_a_fingerprint_that_is_not_of_the_setup_and_skills_is_named(tmp_path, accepted):
    found = problems(forged(tmp_path, accepted, Fingerprint="0123456789abcdef01234567"))
    assert found == ["its fingerprint is not of its setup and skills"]


def test_a_merge_whose_results_file_is_missing_is_named(tmp_path, accepted):
    found = problems(forged(tmp_path, accepted, Results="raw/r001/elsewhere.jsonl"))
    assert found == ["its results file raw/r001/elsewhere.jsonl is missing"]


def test_a_score_its_results_do_not_give_is_named_and_a_rounding_one_is_not(tmp_path, accepted):
    assert problems(forged(tmp_path, accepted, Score="0.900000")) == ["claims val 0.900, its results file gives 0.833"]
    assert problems(forged(tmp_path / "close", accepted, Score="0.8333335")) == []  # within 1e-6


def test_a_merge_without_its_score_is_named_not_a_crash(tmp_path, accepted):
    found = problems(forged(tmp_path, accepted, drop=("Score",)))
    assert found == ["claims no val score; its results file gives 0.833"]


def test_a_merge_compared_with_an_incumbent_not_on_main_before_it_is_named(tmp_path, accepted):
    found = problems(forged(tmp_path, accepted, Incumbent_Fingerprint="0123456789abcdef01234567"))
    assert found == ["the incumbent evaluation it was compared with is not in main's history before it"]


def test_a_merge_evaluated_under_another_setup_than_its_incumbent_is_named(tmp_path, accepted):
    found = problems(forged(tmp_path, accepted, Eval_Setup="0123456789abcdef01234567"))
    assert found == [
        "its fingerprint is not of its setup and skills",
        "it was compared with an incumbent evaluated under another setup",
    ]


def test_a_merge_claiming_tasks_left_out_that_its_results_do_not_leave_out_is_named(tmp_path, accepted):
    found = problems(forged(tmp_path, accepted, Infra="2"))
    assert found == ["claims 2 task(s) left out as infra; its results leave out 0"]


class WrongWorld(ScriptedWorld):
    """A world whose agent answers every task wrongly."""

    def answer(self, system, question):
        return "<answer>wrong</answer>"


def test_a_rerun_that_scores_the_merge_otherwise_is_named_and_one_that_agrees_is_not(accepted):
    def rerun(world):
        model = WorldModel(world)
        return api.audit(accepted, rerun=True, options=RunOptions(model_factory=lambda role: model))

    agreed = rerun(ScriptedWorld())
    assert (agreed.rerun, agreed.problems) == (1, [])
    differs = rerun(WrongWorld())
    label = f"round 1 (spell-letters, {accepted.head(MAIN)[:10]})"
    assert (differs.rerun, differs.problems) == (1, [f"{label}: claims val 0.833, re-evaluated 0.000"])


def test_a_merge_with_a_recorded_problem_is_not_evaluated_again(tmp_path, accepted):
    ws = forged(tmp_path, accepted, Score="0.900000")
    model = WorldModel(WrongWorld())
    report = api.audit(ws, rerun=True, options=RunOptions(model_factory=lambda role: model))
    assert report.rerun == 0 and len(report.problems) == 1


@pytest.fixture(scope="module")
def sequential(tmp_path_factory) -> Workspace:
    """Round 1 merged spell-letters under `sequential` in batches of 5 at 0.9 above a margin of 0.02
    (it stops at look 2, on 10 of 40 val tasks), the agent reading the wiki: main's head is its
    merge."""
    root = tmp_path_factory.mktemp("sequential")
    suite = reversal_suite(root / "suite", 40)
    ws = api.init_workspace(
        root / "ws", benchmark=f"jsonl:{suite}", model="openai/scripted", api_base=UNUSED_SERVER, concurrency=4
    )
    edit_config(
        ws,
        **{
            "gate.policy": "sequential",
            "gate.batch": 5,
            "gate.confidence": 0.9,
            "gate.margin": 0.02,
            "agent.wiki_access": True,
        },
    )
    assert evolve_scripted(ws, rounds=1).decisions == ["accepted"]
    meta = ws.log(MAIN)[0].meta
    assert (meta.look, meta.tasks, meta.incumbent_results) == (2, 10, "raw/r001/val-main.jsonl")
    return ws


def test_a_sequential_merge_whose_agent_reads_the_wiki_is_sound(sequential):
    before = sequential.log(MAIN)[0].parents[0]
    assert sequential.tree_id(before, "wiki/patterns")  # the pattern pages are part of what the agent was given
    assert api.audit(sequential).problems == []


def test_a_sequential_merge_whose_incumbent_results_are_missing_is_named(tmp_path, sequential):
    found = problems(forged(tmp_path, sequential, Incumbent_Results="raw/r001/nowhere.jsonl"))
    assert found == ["the incumbent's results file raw/r001/nowhere.jsonl of its sequential verdict is missing"]
    found = problems(forged(tmp_path / "none", sequential, drop=("Incumbent-Results",)))
    assert found == ["records a sequential verdict without the incumbent's results file it was judged on"]


def test_a_sequential_merge_whose_own_results_are_missing_names_both_files(tmp_path, sequential):
    found = problems(forged(tmp_path, sequential, Results="raw/r001/nowhere.jsonl"))
    assert found == [
        "its results file raw/r001/nowhere.jsonl is missing",
        "the incumbent's results file raw/r001/val-main.jsonl of its sequential verdict is missing",
    ]


def test_a_sequential_merge_whose_incumbent_results_are_not_of_mains_skills_before_it_is_named(tmp_path, sequential):
    found = problems(forged(tmp_path, sequential, Incumbent_Fingerprint="0123456789abcdef01234567"))
    assert found == ["its incumbent results are not of main's skills before it under the same setup"]


def test_a_sequential_merge_read_without_its_policy_is_replayed_as_sequential(tmp_path, sequential):
    assert problems(forged(tmp_path, sequential, drop=("Policy",))) == []


def test_a_sequential_merge_is_replayed_at_the_confidence_and_margin_it_records(tmp_path, sequential):
    no_verdict = (
        "claims accepted at look 2 on 10 tasks; its committed results give no verdict: a sequential "
        "validation of 10 of 40 tasks stopped without a verdict (it needs the next batch)"
    )
    assert problems(forged(tmp_path / "default", sequential, drop=("Confidence",))) == [no_verdict]  # 0.95
    assert problems(forged(tmp_path / "higher", sequential, Confidence="0.95")) == [no_verdict]
    # every task fixed: z is the same at any margin below 1; above it the gain is below the margin
    found = problems(forged(tmp_path / "margin", sequential, Margin="1.5"))
    assert found == ["claims accepted at look 2 on 10 tasks; its committed results give rejected at look 2 on 10 tasks"]


def test_a_sequential_merge_read_without_its_batch_is_replayed_in_looks_of_one_task(tmp_path, sequential):
    found = problems(forged(tmp_path, sequential, drop=("Batch",)))
    assert found == [
        "claims accepted at look 2 on 10 tasks; its committed results give accepted at look 10 on 10 tasks"
    ]


def test_a_merge_recording_looks_under_a_policy_without_them_is_named(tmp_path, sequential):
    found = problems(forged(tmp_path, sequential, Policy="strict"))
    assert found == ["records looks, but its policy strict does not validate in batches"]
    found = problems(forged(tmp_path / "pool", sequential, drop=("Pool",)))
    assert found == ["records looks, but its policy sequential does not validate in batches"]


def test_a_sequential_merge_claiming_tasks_left_out_that_its_results_do_not_leave_out_is_named(tmp_path, sequential):
    found = problems(forged(tmp_path, sequential, Infra="1"))
    assert found == ["claims 1 task(s) left out as infra; its results leave out 0"]


def test_a_sequential_merge_read_as_a_retire_is_replayed_on_the_whole_pool(tmp_path, sequential):
    found = problems(forged(tmp_path, sequential, Action="retire"))
    assert found == [
        "claims accepted at look 2 on 10 tasks; its committed results give no verdict: a sequential "
        "validation of 10 of 40 tasks stopped without a verdict (it needs the next batch)"
    ]


def test_a_task_main_failed_as_infrastructure_is_left_out_of_a_sequential_replay(sequential, tmp_path):
    shutil.copytree(sequential.root, tmp_path / "ws", symlinks=True)
    ws = api.open_workspace(tmp_path / "ws")
    merge = ws.log(MAIN)[0]
    rows = [json.loads(line) for line in ws.read_file(merge.sha, "raw/r001/val-main.jsonl").splitlines()]
    rows[0].update(score=None, failure="infra", error="the check crashed")
    # the same merge committed again on top of it, main's side of its looks with one infra failure
    claims = merge.meta.model_copy(
        update={"round": 2, "incumbent_fingerprint": digest([merge.meta.setup, skills_id(ws, MAIN, True)])}
    )
    ws.commit(
        {"raw/r001/val-main.jsonl": "".join(json.dumps(row) + "\n" for row in rows)},
        format_message("r2 gate: accepted spell-letters", claims),
        base=ws.tree_id(merge.sha, ""),
        extra_parents=(merge.parents[1],),
    )
    assert api.audit(ws).problems == [
        f"round 2 (spell-letters, {ws.head(MAIN)[:10]}): claims 0 task(s) left out as infra; its results leave out 1"
    ]


class FirstTenWorld(ScriptedWorld):
    """The scripted world whose agent slips on every val reversal but the first ten of the pool."""

    def __init__(self, suite):
        super().__init__()
        rows = [json.loads(line) for line in (suite / "val.jsonl").read_text().splitlines()]
        self.first = {row["question"] for row in rows[:10]}

    def answer(self, system, question):
        text = super().answer(system, question)
        return text if question in self.first or "backwards" not in question else "<answer>slip</answer>"


def test_a_sequential_merge_is_evaluated_again_on_the_tasks_its_looks_used(sequential):
    model = WorldModel(FirstTenWorld(sequential.root.parent / "suite"))
    report = api.audit(sequential, rerun=True, options=RunOptions(model_factory=lambda role: model))
    assert (report.rerun, report.problems) == (1, [])  # 1.000 on the ten tasks, not 0.250 on all forty
