"""Junk proposals are refused before they cost a validation run: the round is closed `invalid`
with the reason in skill-impact.md. The fixtures are the three proposals a real 0.5B model sent
(tests/fixtures/junk/README.md); proposals the other tests accept still pass."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scripted import SPELL, USELESS, ScriptedWorld, create, evolve_through_cli
from wikiskill import api
from wikiskill.core.prompts import render
from wikiskill.knowledge.junk import WEAK_PROPOSER, Known, junk_reason, reserved_names
from wikiskill.knowledge.proposals import prepare_proposal
from wikiskill.store.trailers import Decision, Step
from wikiskill.store.workspace import MAIN
from wikiskill.testing.fakeserver import FakeOpenAIServer

FIXTURES = Path(__file__).parents[1] / "fixtures" / "junk"
EXAMPLE = Path(__file__).resolve().parents[2] / "benchmarks" / "example-qa"
JUNK = {
    name: json.loads((FIXTURES / f"{name}.json").read_text()) for name in ("skill-impact", "train-04", "skill-name")
}
TASK_IDS = [json.loads(line)["id"] for split in ("train", "val") for line in (EXAMPLE / f"{split}.jsonl").open()]
FILES = ["wiki/index.md", "wiki/log.md", "wiki/skill-impact.md", "wikiskill.yaml", ".gitignore"]
IMPACT_HEADER = (
    "# Skill impact\n\nOne entry per skill proposal, accepted or rejected: what was proposed, why, the "
    "diff, the validation scores and the decision. Proposers read this so they do not repeat rejected "
    "approaches."
)
SYSTEM = render("proposer_system", min_trace_reads=4, max_turns=20)
KNOWN = Known(reserved_names(TASK_IDS, FILES), [SYSTEM, IMPACT_HEADER])
GOOD = {
    "action": "create",
    "name": "count-letters",
    "description": "Use when a question asks how often a letter occurs in a word.",
    "when_to_apply": "Counting one letter in one word.",
    "when_not_to_apply": "Reversals.",
    "instructions": "1. Write the word one letter per line.\n2. Mark each line holding the letter.\n"
    "3. Answer with the number of marks.",
    "rationale": "train-00 and train-02 miscounted",
}


def refusal(raw: dict, known: Known = KNOWN) -> str | None:
    return junk_reason(prepare_proposal(raw, {}, 1), known)


def test_the_three_junk_proposals_are_closed_invalid_before_any_validation(tmp_path):
    ws = tmp_path / "ws"
    world = ScriptedWorld(proposals={1: JUNK["skill-impact"], 2: JUNK["train-04"], 3: JUNK["skill-name"]})
    with FakeOpenAIServer(world) as server:
        evolve_through_cli(CliRunner(), ws, server.base_url, rounds=3)
    workspace = api.open_workspace(ws)
    rows = api.round_log(workspace)
    assert [(row.action, row.skill, row.decision) for row in rows] == [
        ("create", "skill-impact", "invalid"),
        ("create", "train-04", "invalid"),
        ("create", "skill-name", "invalid"),
    ]
    impact = workspace.read_file(MAIN, "wiki/skill-impact.md")
    assert "`skill-impact` is the workspace file wiki/skill-impact.md, not a skill name" in impact
    assert "`train-04` is a task id of the suite, not a skill name" in impact
    assert "`skill-name` is a placeholder of the proposal schema, not a skill name" in impact
    steps = [commit.meta.step for commit in workspace.log("--all", first_parent=False)]
    assert Step.VALIDATE not in steps and Step.PROPOSE not in steps
    val = {json.loads(line)["question"] for line in (EXAMPLE / "val.jsonl").open()}
    first_proposer = next(
        i
        for i, body in enumerate(server.requests)
        if body["messages"][0]["content"].startswith("You are a Skill Proposer Agent")
    )
    later_questions = {body["messages"][-1]["content"] for body in server.requests[first_proposer:]}
    assert not later_questions & val  # the baseline's val run was the only one
    gates = [c.meta for c in workspace.log(MAIN) if c.meta.step == Step.GATE]
    assert {meta.decision for meta in gates} == {Decision.INVALID}


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("skill-impact", "the workspace file wiki/skill-impact.md"),
        ("train-04", "a task id of the suite"),
        ("skill-name", "a placeholder of the proposal schema"),
    ],
)
def test_each_junk_proposal_is_refused_for_its_name(name, why):
    assert refusal(JUNK[name]).startswith(f"`{name}` is {why}, not a skill name")


def test_a_copied_placeholder_says_the_model_looks_too_weak_for_the_role_and_what_to_try():
    assert refusal(JUNK["skill-name"]) == (
        f"`skill-name` is a placeholder of the proposal schema, not a skill name: {WEAK_PROPOSER}"
    )
    assert "try a larger `proposer.model`" in WEAK_PROPOSER
    assert WEAK_PROPOSER not in refusal(JUNK["train-04"])  # a task id is not the schema


@pytest.mark.parametrize(
    "name", ["val-03", "index", "log", "purpose", "skill", "wikiskill", "when-to-apply", "situations", "exact-step"]
)
def test_names_of_tasks_files_and_schema_parts_are_refused(name):
    assert "not a skill name" in refusal({**GOOD, "name": name})


def test_a_body_copied_from_the_wiki_header_or_the_schema_is_refused_under_any_name():
    copied = refusal({**JUNK["skill-impact"], "name": "proposal-history"})
    assert copied.startswith("the skill's description and body repeat the proposal schema or the prompt")
    placeholders = refusal({**JUNK["skill-name"], "name": "fix-reversals"})
    assert placeholders.startswith("the skill's description and body repeat")
    schema = {
        **GOOD,
        "description": "what the skill does and when to use it (one or two sentences)",
        "when_to_apply": "the situations the skill is for",
        "when_not_to_apply": "the situations it is not for",
        "instructions": "concrete, numbered steps: exact actions, not vague advice",
    }
    assert refusal(schema).startswith("the skill's description and body repeat")
    prompt = {
        **GOOD,
        "description": "Use when you improve a task agent by changing its skills.",
        "when_to_apply": "Read the wiki index, then the pattern pages that matter.",
        "when_not_to_apply": "You cannot read validation or test material.",
        "instructions": "1. Prefer patching an existing skill over creating a new one.\n2. Make one "
        "atomic change.\n3. Read at least 4 traces to see exact failures and successes.",
    }
    assert refusal(prompt).startswith("the skill's description and body repeat")


def test_a_description_that_does_not_say_when_to_use_the_skill_is_refused():
    assert "does not say when to use the skill" in refusal({**GOOD, "description": "Counts letters carefully."})


@pytest.mark.parametrize(
    "raw",
    [
        create("spell-letters", SPELL),
        create("Useless Hint", USELESS),
        GOOD,
        {**GOOD, "description": "Spell a word\nbefore reversing it."},
    ],
    ids=["spell-letters", "useless-hint", "count-letters", "parts"],
)
def test_proposals_that_other_tests_accept_are_not_junk(raw):
    assert refusal(raw) is None


def test_patches_retires_and_no_action_are_never_junk():
    skills = {"train-04/SKILL.md": create("train-04", SPELL)["skill_md"]}
    for raw in (
        {"action": "retire", "name": "train-04", "rationale": "unused"},
        {"action": "no_action", "rationale": "nothing helps"},
    ):
        assert junk_reason(prepare_proposal(raw, skills, 1), KNOWN) is None
