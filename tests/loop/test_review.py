"""A person in the loop. Under `gate.review: human` a candidate the gate policy accepts waits on
`pending/rNNN-<name>` and evolution goes on; `accept` merges it (validated again first when
main's skills moved), `reject --why` tags it rejected with the reason, which the next proposer
reads. `skills.locked` keeps the proposer's hands off a skill and `rollback` off it without
--force. Workspaces evolved by the scripted world: round 1 proposes `spell-letters` (val 0.500 ->
0.833), round 2 a useless skill."""

import json
import re
import shutil

import pytest
import yaml
from typer.testing import CliRunner

from conftest import git
from inprocess import WorldModel, evolve_scripted, scripted_workspace
from scripted import SPELL, ScriptedWorld, create, skill_md
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.cli import app
from wikiskill.core.errors import ConfigError, WikiskillError, WorkspaceError
from wikiskill.history.htmlreport import render_report, report_data
from wikiskill.loop.review import set_lock
from wikiskill.store.pending import find_pending
from wikiskill.store.trailers import Decision, Step
from wikiskill.store.workspace import MAIN, Workspace
from wikiskill.testing.fakeserver import FakeOpenAIServer
from workspaces import edit_config, gate_of

LONG = "LONG-WORDS-MARKER"
PROPOSER = "You are a Skill Proposer Agent"


class RecordingWorld(ScriptedWorld):
    """The scripted world, keeping each proposer request's user prompt and counting agent answers."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.proposer_prompts: list[str] = []
        self.answers = 0

    def propose(self, messages):
        if len(messages) == 2:
            self.proposer_prompts.append(messages[1]["content"])
        return super().propose(messages)

    def answer(self, system, question):
        self.answers += 1
        return super().answer(system, question)


class LongWordsWorld(RecordingWorld):
    """A second marker, LONG, fixes the reversals of words longer than 6 letters."""

    def answer(self, system, question):
        text = super().answer(system, question)
        word = re.search(r"Write the word '(\w+)' backwards", question)
        if word and LONG in system and len(word.group(1)) > 6:
            return f"<answer>{word.group(1)[::-1]}</answer>"
        return text


def model(world):
    chat = WorldModel(world)
    return lambda role: chat


def human_review(ws: Workspace) -> None:
    edit_config(ws, **{"gate.review": "human"})
    git(ws.root, "commit", "-qam", "review by a person")


@pytest.fixture(scope="module")
def queued(tmp_path_factory):
    """Two rounds under human review: round 1's spell-letters waits, round 2's skill was rejected."""
    ws = scripted_workspace(tmp_path_factory.mktemp("queued") / "ws")
    human_review(ws)
    world = RecordingWorld()
    result = evolve_scripted(ws, rounds=2, world=world)
    return ws, world, result


@pytest.fixture()
def workspace(queued, tmp_path) -> Workspace:
    """A copy of the queued workspace, for a test that decides."""
    shutil.copytree(queued[0].root, tmp_path / "ws", symlinks=True)
    return Workspace(tmp_path / "ws")


def audit_problems(ws: Workspace) -> list[str]:
    return api.audit(ws, options=RunOptions(model_factory=model(ScriptedWorld()))).problems


def test_a_two_round_run_under_human_review_ends_with_one_pending_candidate(queued):
    ws, world, result = queued
    assert result.decisions == [Decision.PENDING, Decision.REJECTED]
    assert list(ws.refs("refs/heads/pending/")) == ["pending/r001-spell-letters"]
    assert api.load_skills(ws) == []  # nothing merged
    assert api.status(ws).pending == ["r001-spell-letters"]
    assert "## r001 · create · spell-letters · PENDING" in ws.read_file(MAIN, "wiki/skill-impact.md")
    told = world.proposer_prompts[1].split("# Candidates waiting for a person's review")[1].split("\n#")[0]
    assert "- create spell-letters (pending/r001-spell-letters)" in told  # round 2's proposer is told
    [item] = api.review(ws)
    assert (item.id, item.skill) == ("r001-spell-letters", "spell-letters")
    assert (item.candidate, item.incumbent) == (0.833333, 0.5)
    assert item.fixed == ["val-01", "val-03"] and item.broken == []
    assert item.pages == ["wiki/patterns/reversal-slips.md"] and item.traces[0] == "traces/train-00"
    assert item.cost["candidate_tokens"] > 0 and "+name: spell-letters" in item.diff
    assert not item.main_moved and audit_problems(ws) == []


def test_review_json_lists_the_queue_for_scripts(queued):
    out = CliRunner().invoke(app, ["-C", str(queued[0].root), "review", "--json"])
    assert out.exit_code == 0, out.output
    [item] = json.loads(out.stdout)
    assert item["id"] == "r001-spell-letters" and item["fixed"] == ["val-01", "val-03"]


def test_status_show_and_the_report_show_the_queue(queued):
    ws = queued[0]
    runner = CliRunner()
    status = runner.invoke(app, ["-C", str(ws.root), "status"])
    assert "review      1 pending: r001-spell-letters" in status.output
    show = runner.invoke(app, ["-C", str(ws.root), "show", "1"])
    assert "validation: 6 tasks" in show.output and "decision: pending" in show.output
    page = render_report(report_data(ws), "queued")
    queue = page.split('<table id="review-queue">')[1].split("</table>")[0]
    assert "r001-spell-letters (create spell-letters)" in queue and "val-01, val-03" in queue


def test_review_states_the_candidates_effect_as_show_does(queued):
    ws = queued[0]
    review = CliRunner().invoke(app, ["-C", str(ws.root), "review"]).output
    show = CliRunner().invoke(app, ["-C", str(ws.root), "show", "1"]).output
    stated = [line.strip() for line in review.splitlines() if line.strip().startswith(("Effect:", "Helped:", "Hurt:"))]
    assert stated[0] == "Effect: helped 2 val task(s) (2 newly solved), hurt 0 (0 no longer solved)"
    assert all(line in show for line in stated)


def test_accept_that_validates_the_incumbent_again_names_no_round_that_has_not_started(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    world = LongWordsWorld({1: create("spell-letters", SPELL), 2: create("long-words", LONG)})
    evolve_scripted(ws, rounds=1, world=world)
    human_review(ws)
    evolve_scripted(ws, rounds=1, world=world)
    skill = ws.root / "skills/spell-letters/SKILL.md"
    skill.write_text(skill.read_text() + "3. Check the first letter.\n")
    git(ws.root, "commit", "-qam", "a person's edit: main's skills have no evaluation yet")
    with FakeOpenAIServer(world) as server:
        result = CliRunner().invoke(app, ["-C", str(ws.root), "accept", "long-words", "--api-base", server.base_url])
    assert result.exit_code == 0, result.output
    subjects = git(ws.root, "log", "--format=%s", "main")
    assert "r003" not in result.output + subjects and "accept r002-long-words: re-validate incumbent" in subjects
    [incumbent] = [c for c in ws.log(MAIN) if c.subject.startswith("accept r002-long-words: re-validate incumbent")]
    assert (incumbent.meta.step, incumbent.meta.round) == (Step.INCUMBENT, 3)  # the round it stands before


def test_accept_merges_the_pending_candidate_in_one_commit_decided_by_a_person(workspace):
    before = workspace.head(MAIN)
    decision = api.accept(workspace, "spell-letters", RunOptions(model_factory=model(ScriptedWorld())))
    assert (decision.decision, decision.revalidated) == (Decision.ACCEPTED, False)
    merge = workspace.log(MAIN)[0]
    assert merge.parents[0] == before and merge.sha == decision.commit
    assert (merge.meta.step, merge.meta.decision, merge.meta.decided_by) == (Step.GATE, Decision.ACCEPTED, "person")
    assert [skill.name for skill in api.load_skills(workspace)] == ["spell-letters"]
    assert workspace.refs("refs/heads/pending/") == {} and api.review(workspace) == []
    assert audit_problems(workspace) == []
    again = api.accept(workspace, "spell-letters", RunOptions(model_factory=model(ScriptedWorld())))
    assert (again.decision, again.commit) == (Decision.ACCEPTED, merge.sha) and workspace.head(MAIN) == merge.sha
    with pytest.raises(WorkspaceError, match="already accepted"):
        api.reject(workspace, "spell-letters", "too late")


WHY = "spelling out every word doubles the answer length"


def test_reject_records_the_reason_and_the_next_proposer_reads_it(workspace):
    tip, pending = workspace.head("pending/r001-spell-letters"), find_pending(workspace, "spell-letters")
    impact_before = workspace.read_file(MAIN, "wiki/skill-impact.md")
    decision = api.reject(workspace, "r001-spell-letters", WHY)
    assert workspace.read_file(MAIN, "wiki/skill-impact.md").startswith(impact_before)  # appended to
    commit = workspace.log(MAIN)[0]
    assert (commit.sha, commit.meta.decision, commit.meta.decided_by) == (decision.commit, Decision.REJECTED, "person")
    assert commit.subject == "r001 gate: rejected by a person spell-letters"  # the why is in the body
    assert workspace.body(commit.sha) == decision.reason == f"rejected by a person: {WHY}"
    meta = commit.meta
    assert (meta.round, meta.step, meta.action, meta.skill) == (1, Step.GATE, "create", "spell-letters")
    assert (meta.score, meta.incumbent, meta.cost_usd) == (0.833333, 0.5, 0.0)
    assert meta.candidate == pending.evidence.sha  # the commit of the gate's verdict that it waits
    assert workspace.refs("refs/tags/rejected/")["rejected/r001-spell-letters"] == tip
    assert workspace.refs("refs/heads/pending/") == {}
    entry = workspace.read_file(MAIN, "wiki/skill-impact.md").split("\n## ")[-1]  # the rejection's
    assert entry.startswith("r001 · create · spell-letters · REJECTED\n")
    for line in (
        "- Candidate score: 0.833",
        "- Incumbent score: 0.500",
        f"- Decision: rejected — rejected by a person: {WHY}",
        f"- Kept at: tag rejected/r001-spell-letters ({tip[:10]})",
        "- Rationale: reversal tasks fail; spell-letters should fix them",  # the proposer's
    ):
        assert f"\n{line}\n" in entry
    assert api.review(workspace) == [] and api.load_skills(workspace) == []
    world = RecordingWorld()
    evolve_scripted(workspace, rounds=1, world=world)
    assert WHY in world.proposer_prompts[0] and "Candidates waiting" not in world.proposer_prompts[0]
    assert audit_problems(workspace) == []


def test_a_decision_run_again_over_the_branch_a_kill_left_only_removes_the_branch(workspace):
    tip = workspace.head("pending/r001-spell-letters")
    first = api.reject(workspace, "spell-letters", WHY)
    git(workspace.root, "branch", "pending/r001-spell-letters", tip)  # a kill between commit and deletion
    head = workspace.head(MAIN)
    assert api.reject(workspace, "r001-spell-letters", WHY) == first
    assert workspace.head(MAIN) == head and workspace.refs("refs/heads/pending/") == {}
    with pytest.raises(WorkspaceError, match=rf"^r001-spell-letters was already rejected \({first.commit[:10]}\)$"):
        api.accept(workspace, "spell-letters", RunOptions(model_factory=model(ScriptedWorld())))


@pytest.mark.slow
def test_the_reason_of_a_rejection_reaches_the_next_proposer_through_the_server(workspace):
    why = WHY
    api.reject(workspace, "spell-letters", why)
    with FakeOpenAIServer(ScriptedWorld()) as server:
        assert api.evolve(workspace, 1, RunOptions(api_base=server.base_url)).rounds_completed == 3
        prompts = [
            body["messages"][1]["content"]
            for body in server.requests
            if body["messages"][0]["content"].startswith(PROPOSER) and len(body["messages"]) == 2
        ]
    assert len(prompts) == 1 and why in prompts[0]


def test_a_proposal_of_a_skill_that_waits_for_review_is_refused_before_validation(workspace):
    world = RecordingWorld({3: create("spell-letters", SPELL)})
    assert evolve_scripted(workspace, rounds=1, world=world).decisions == [Decision.INVALID]
    assert "already waits for review as pending/r001-spell-letters" in workspace.body(gate_of(workspace, 3).sha)
    assert world.answers == 12  # the rollout's train tasks only


def test_reject_without_a_reason_is_refused_and_writes_nothing(workspace):
    before = workspace.head(MAIN)
    with pytest.raises(WikiskillError, match="^say why the candidate is rejected"):
        api.reject(workspace, "spell-letters", "  ")
    assert workspace.head(MAIN) == before and "pending/r001-spell-letters" in workspace.refs("refs/heads/pending/")


def test_accept_after_a_rollback_of_main_validates_again_before_merging(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    world = LongWordsWorld({1: create("spell-letters", SPELL), 2: create("long-words", LONG)})
    assert evolve_scripted(ws, rounds=1, world=world).decisions == [Decision.ACCEPTED]
    human_review(ws)
    assert evolve_scripted(ws, rounds=1, world=world).decisions == [Decision.PENDING]  # 1.000 against 0.833
    api.rollback(ws, "spell-letters")
    [item] = api.review(ws)
    assert item.main_moved and item.candidate == 1.0
    answers = world.answers
    decision = api.accept(ws, "long-words", RunOptions(model_factory=model(world)))
    assert (decision.decision, decision.revalidated) == (Decision.ACCEPTED, True)
    assert world.answers - answers == 6  # the candidate's val tasks (git records main's: the baseline's skills)
    merge = ws.log(MAIN)[0]
    validated, reapplied = ws.log(merge.parents[1])[:2]  # on the candidate: main merged in, then validated
    assert (validated.meta.step, reapplied.meta.step) == (Step.VALIDATE, Step.REAPPLY)
    assert "validated again" not in ws.body(reapplied.sha) and "no task ran here" in ws.body(reapplied.sha)
    assert reapplied.parents[1] == merge.parents[0]
    assert (merge.meta.score, merge.meta.incumbent) == (pytest.approx(0.666667), 0.5)
    assert decision.reason.startswith("accepted by a person after review (re-validated on main's current skills, val ")
    assert ws.body(merge.sha).startswith(decision.reason)
    assert [skill.name for skill in api.load_skills(ws)] == ["long-words"]
    assert audit_problems(ws) == []


def test_accept_whose_revalidation_the_gate_rejects_tags_it_exits_1_and_merges_nothing(workspace):
    folder = workspace.root / "skills/spelled-by-hand"
    folder.mkdir()
    (folder / "SKILL.md").write_text(skill_md("spelled-by-hand", SPELL), encoding="utf-8")
    person = ["-c", "user.name=A Person", "-c", "user.email=person@example.invalid"]
    git(workspace.root, "add", "skills")
    git(workspace.root, *person, "commit", "-qm", "a skill of my own that spells words out")
    before, skills = workspace.head(MAIN), git(workspace.root, "rev-parse", "main:skills")
    with FakeOpenAIServer(ScriptedWorld()) as server:
        argv = ["-C", str(workspace.root), "accept", "spell-letters", "--api-base", server.base_url]
        result = CliRunner().invoke(app, argv)
    assert result.exit_code == 1, result.output
    assert result.output.splitlines()[-1].startswith("r001-spell-letters: rejected (")
    assert "rejected/r001-spell-letters" in workspace.refs("refs/tags/rejected/")
    assert workspace.refs("refs/heads/pending/") == {} and api.review(workspace) == []
    log = [commit.sha for commit in workspace.log(MAIN)]
    since = workspace.log(MAIN)[: log.index(before)]  # main's incumbent re-validated, then the verdict
    assert [len(commit.parents) for commit in since] == [1] * len(since)  # nothing merged
    assert since[0].meta.decision == Decision.REJECTED and since[0].meta.decided_by is None
    assert git(workspace.root, "rev-parse", "main:skills") == skills  # main's skills as they were
    assert [skill.name for skill in api.load_skills(workspace)] == ["spelled-by-hand"]
    assert audit_problems(workspace) == []
    again = api.accept(workspace, "spell-letters", RunOptions(model_factory=model(ScriptedWorld())))
    assert (again.candidate, again.decision, again.commit) == ("r001-spell-letters", Decision.REJECTED, since[0].sha)
    assert again.reason == workspace.body(since[0].sha) and workspace.head(MAIN) == since[0].sha


def locked_world(proposal: dict) -> RecordingWorld:
    return RecordingWorld({1: proposal})


@pytest.mark.parametrize(
    "proposal",
    [
        {"action": "patch", "name": "spell-letters", "edits": [{"op": "append", "content": "- more"}], "rationale": ""},
        {"action": "retire", "name": "spell-letters", "rationale": "unused"},
    ],
    ids=["patch", "retire"],
)
def test_a_proposal_to_change_a_locked_skill_is_refused_before_any_val_task_runs(tmp_path, proposal):
    ws = scripted_workspace(tmp_path / "ws")
    (ws.root / "skills/spell-letters").mkdir(parents=True)
    (ws.root / "skills/spell-letters/SKILL.md").write_text(skill_md("spell-letters", SPELL))
    sha = api.lock(ws, "spell-letters")  # written by hand: committed and locked at once
    assert sorted(ws.changed_paths(f"{sha}^", sha)) == ["skills/spell-letters/SKILL.md", "wikiskill.yaml"]
    world = locked_world(proposal)
    assert evolve_scripted(ws, rounds=1, world=world).decisions == [Decision.INVALID]
    assert world.answers == 6 + 12  # the baseline's val tasks and the rollout's train tasks, no validation
    assert "skill 'spell-letters' is locked" in ws.body(gate_of(ws, 1).sha)
    assert "spell-letters" in world.proposer_prompts[0].split("# Locked skills")[1]


def test_lock_and_unlock_each_commit_the_setting_and_say_when_there_is_nothing_to_do(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    with pytest.raises(WorkspaceError, match="no skill 'spell-letters' to lock"):
        api.lock(ws, "spell-letters")
    (ws.root / "skills/spell-letters").mkdir(parents=True)
    (ws.root / "skills/spell-letters/SKILL.md").write_text(skill_md("spell-letters", SPELL))
    locked = api.lock(ws, "spell-letters")
    text = ws.read_file(locked, "wikiskill.yaml")
    assert yaml.safe_load(text)["skills"] == {"mode": "full", "locked": ["spell-letters"]} and "# full |" in text
    assert ws.log(MAIN)[0].meta.decided_by == "person"
    assert api.lock(ws, "spell-letters") is None
    unlocked = api.unlock(ws, "spell-letters")
    assert yaml.safe_load(ws.read_file(unlocked, "wikiskill.yaml"))["skills"]["locked"] == []
    assert api.unlock(ws, "spell-letters") is None


def test_lock_and_unlock_answer_a_change_that_is_already_made_alike(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    assert evolve_scripted(ws, rounds=1).decisions == [Decision.ACCEPTED]
    answers = []
    for verb in ("lock", "lock", "unlock", "unlock"):
        result = CliRunner().invoke(app, ["-C", str(ws.root), verb, "spell-letters"])
        answers.append((result.exit_code, result.output.strip(), ws.head(MAIN)))
    locked, locked_again, unlocked, unlocked_again = answers
    assert locked_again == (0, "spell-letters is already locked: nothing to do", locked[2])
    assert unlocked_again == (0, "spell-letters is already unlocked: nothing to do", unlocked[2])


def test_rollback_of_a_locked_skill_needs_force(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    assert evolve_scripted(ws, rounds=1).decisions == [Decision.ACCEPTED]
    api.lock(ws, "spell-letters")
    before = ws.head(MAIN)
    with pytest.raises(WorkspaceError, match="locked .* --force"):
        api.rollback(ws, "spell-letters")
    assert ws.head(MAIN) == before
    api.rollback(ws, "spell-letters", force=True)
    assert api.load_skills(ws) == []


def test_accept_of_a_candidate_that_conflicts_with_main_now_answers_the_gates_stale_rejection(workspace):
    tip = workspace.head("pending/r001-spell-letters")
    folder = workspace.root / "skills/spell-letters"
    folder.mkdir()
    (folder / "SKILL.md").write_text(skill_md("spell-letters", "Spell words by hand."), encoding="utf-8")
    git(workspace.root, "add", "skills")
    git(workspace.root, "commit", "-qm", "a person's own spell-letters, which the candidate's conflicts with")
    skills = git(workspace.root, "rev-parse", "main:skills")
    decision = api.accept(workspace, "spell-letters", RunOptions(model_factory=model(ScriptedWorld())))
    gate = workspace.log(MAIN)[0]
    assert (gate.meta.step, gate.meta.round, gate.meta.decision) == (Step.GATE, 1, Decision.REJECTED)
    assert (decision.candidate, decision.decision, decision.commit) == (
        "r001-spell-letters",
        Decision.REJECTED,
        gate.sha,
    )
    assert decision.revalidated and decision.reason == workspace.body(gate.sha)
    assert decision.reason.startswith("stale: main moved from ") and "conflicts with main's skills" in decision.reason
    assert workspace.refs("refs/tags/rejected/")["rejected/r001-spell-letters"] == tip
    assert workspace.refs("refs/heads/pending/") == {} and api.review(workspace) == []
    assert git(workspace.root, "rev-parse", "main:skills") == skills


def test_lock_commits_the_setting_with_the_skills_own_files_and_unlock_the_setting_alone(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    for name in ("spell-letters", "check-leap-years"):
        (ws.root / f"skills/{name}").mkdir(parents=True)
        (ws.root / f"skills/{name}/SKILL.md").write_text(skill_md(name, f"Handle {name}."))
    locked = api.lock(ws, "spell-letters")
    commit = ws.log(MAIN)[0]
    assert commit.sha == locked and commit.subject == "lock spell-letters: skills.locked += spell-letters"
    meta = commit.meta
    assert (meta.round, meta.step, meta.skill, meta.decided_by, meta.cost_usd) == (
        0,
        Step.HUMAN,
        "spell-letters",
        "person",
        0.0,
    )
    assert ws.body(locked) == (
        "The proposer may not patch or retire spell-letters, and `rollback` reverts it only with --force."
    )
    assert sorted(ws.changed_paths(f"{locked}^", locked)) == ["skills/spell-letters/SKILL.md", "wikiskill.yaml"]
    api.lock(ws, "check-leap-years")
    assert yaml.safe_load(ws.read_file(MAIN, "wikiskill.yaml"))["skills"]["locked"] == [
        "check-leap-years",
        "spell-letters",
    ]
    edited = ws.root / "skills/spell-letters/SKILL.md"
    edited.write_text(edited.read_text() + "3. Say each letter.\n")
    unlocked = api.unlock(ws, "spell-letters")
    commit = ws.log(MAIN)[0]
    assert commit.sha == unlocked and commit.subject == "unlock spell-letters: skills.locked -= spell-letters"
    assert ws.body(unlocked) == "The proposer may change spell-letters again."
    assert ws.changed_paths(f"{unlocked}^", unlocked) == ["wikiskill.yaml"]  # the edit stays the person's
    assert ws.dirty_paths("skills/spell-letters") == ["skills/spell-letters/SKILL.md"]
    assert yaml.safe_load(ws.read_file(MAIN, "wikiskill.yaml"))["skills"]["locked"] == ["check-leap-years"]
    assert api.unlock(ws, "no-such-skill") is None and ws.head(MAIN) == unlocked


def test_a_rejection_records_the_proposers_rationale_without_the_notes_on_its_proposal(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    human_review(ws)
    world = RecordingWorld({1: {**create("spell-letters", SPELL), "name": "Spell_Letters"}})
    assert evolve_scripted(ws, rounds=1, world=world).decisions == [Decision.PENDING]
    propose = next(c for c in ws.log("pending/r001-spell-letters") if c.meta.step == Step.PROPOSE)
    assert ws.body(propose.sha).endswith("\n\n- name 'Spell_Letters' normalised to 'spell-letters'")
    api.reject(ws, "spell-letters", WHY)
    entry = ws.read_file(MAIN, "wiki/skill-impact.md").split("\n## ")[-1]
    assert "\n- Rationale: reversal tasks fail; spell-letters should fix them\n" in entry
    assert "normalised" not in entry


def test_a_reject_killed_between_its_tag_and_its_commit_finishes_when_run_again(workspace):
    tip = workspace.head("pending/r001-spell-letters")
    git(workspace.root, "tag", "rejected/r001-spell-letters", tip)  # what a kill right after the tag leaves
    decision = api.reject(workspace, "spell-letters", WHY)
    commit = workspace.log(MAIN)[0]
    assert (commit.sha, commit.meta.decision, commit.meta.decided_by) == (decision.commit, Decision.REJECTED, "person")
    assert workspace.refs("refs/tags/rejected/")["rejected/r001-spell-letters"] == tip
    assert workspace.refs("refs/heads/pending/") == {}


def test_a_decision_run_again_after_main_moved_on_answers_the_decision_as_it_was(workspace):
    tip = workspace.head("pending/r001-spell-letters")
    first = api.reject(workspace, "spell-letters", WHY)
    (workspace.root / "notes.md").write_text("a person's notes\n")
    git(workspace.root, "add", "notes.md")
    git(workspace.root, "commit", "-qm", "a person's commit after the decision")
    git(workspace.root, "branch", "pending/r001-spell-letters", tip)  # a kill between commit and deletion
    assert api.reject(workspace, "spell-letters", WHY) == first


def test_lock_refuses_a_settings_file_it_cannot_read_naming_it(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    config = ws.root / "wikiskill.yaml"
    text = config.read_bytes()
    config.write_bytes(text + "# caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match=r"wikiskill\.yaml, line \d+ \(byte offset \d+\): not UTF-8 text"):
        set_lock(ws, "spell-letters", True)
    config.write_bytes(text + b"skills: [\n")
    with pytest.raises(ConfigError, match=r"^wikiskill\.yaml, line \d+: not valid YAML"):
        set_lock(ws, "spell-letters", True)


def test_a_skill_on_main_whose_folder_a_person_removed_can_still_be_locked(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    assert evolve_scripted(ws, rounds=1).decisions == [Decision.ACCEPTED]
    shutil.rmtree(ws.root / "skills/spell-letters")
    locked = api.lock(ws, "spell-letters")
    assert ws.changed_paths(f"{locked}^", locked) == ["wikiskill.yaml"]
    assert yaml.safe_load(ws.read_file(MAIN, "wikiskill.yaml"))["skills"]["locked"] == ["spell-letters"]


def test_accept_whose_revalidation_is_rejected_records_why_and_where_it_is_kept(workspace):
    folder = workspace.root / "skills/spelled-by-hand"
    folder.mkdir()
    (folder / "SKILL.md").write_text(skill_md("spelled-by-hand", SPELL), encoding="utf-8")
    git(workspace.root, "add", "skills")
    git(workspace.root, "commit", "-qm", "a skill of my own that spells words out")
    pending = find_pending(workspace, "spell-letters")
    git(workspace.root, "tag", "rejected/r001-spell-letters", pending.tip)  # left by an earlier run, say
    impact = workspace.read_file(MAIN, "wiki/skill-impact.md")
    decision = api.accept(workspace, "spell-letters", RunOptions(model_factory=model(ScriptedWorld())))
    gate = workspace.log(MAIN)[0]
    assert (decision.decision, decision.revalidated, decision.commit) == (Decision.REJECTED, True, gate.sha)
    assert decision.reason.startswith("re-validated on main's current skills before the merge: val ")
    assert gate.subject == "r001 gate: rejected spell-letters on re-validation"  # the verdict is in the body
    assert workspace.body(gate.sha).startswith(decision.reason)
    assert (gate.meta.decision, gate.meta.candidate) == (Decision.REJECTED, pending.evidence.sha)
    kept = workspace.refs("refs/tags/rejected/")["rejected/r001-spell-letters"]
    assert workspace.is_ancestor(pending.tip, kept) and kept != pending.tip  # the re-validated candidate
    now = workspace.read_file(MAIN, "wiki/skill-impact.md")
    assert now.startswith(impact)
    entry = now.split("\n## ")[-1]
    assert entry.startswith("r001 · create · spell-letters · REJECTED\n")
    assert f"\n- Kept at: tag rejected/r001-spell-letters ({kept[:10]})\n" in entry
    assert f"\n- Decision: rejected — {decision.reason}\n" in entry
    diff = entry.split("```diff\n")[1]
    assert "+name: spell-letters" in diff and "raw/" not in diff  # the skills it would have merged, only


def test_accept_without_a_revalidation_gives_the_gates_reason(workspace):
    decision = api.accept(workspace, "spell-letters", RunOptions(model_factory=model(ScriptedWorld())))
    assert decision.candidate == "r001-spell-letters"
    entry = workspace.read_file(MAIN, "wiki/skill-impact.md").split("\n## ")[-1]
    merged = workspace.log(MAIN)[0].parents[1]
    assert f"\n- Kept at: merged from pending/r001-spell-letters ({merged[:10]})\n" in entry
    assert decision.reason == "accepted by a person after review (val 0.833 > incumbent 0.500)"
    assert workspace.body(decision.commit).startswith(decision.reason)
