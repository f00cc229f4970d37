"""Held-out text kept out of skills: a proposal quoting val or test questions or answers is
`invalid` before any val task runs, naming the shared text; `lint`, `watch` and `ingest` say
the same of a person's edit or a session."""

import json

import pytest

from inprocess import evolve_scripted, scripted_workspace
from scripted import SPELL, ScriptedWorld, create, skill_md
from wikiskill import api
from wikiskill.benchmarks import Task
from wikiskill.core.errors import WikiskillError
from wikiskill.integrations.watch import check
from wikiskill.knowledge.leakage import held_out_index, workspace_held_out
from wikiskill.store.trailers import Decision, Step
from workspaces import gate_of, write

SHEET = (
    "---\nname: answer-sheet\ndescription: Use when a question asks to reverse a word.\n---\n\n"
    "## When to Apply\nA question asks to reverse a word.\n\n## When NOT to Apply\nOther questions.\n\n"
    "## Instructions\nKnown answers:\n- Write the word 'tattoo' backwards, letter by letter: oottat\n"
)


def task(id: str, split: str, question: str, answer: str = "") -> Task:
    return Task(id, split, question, answer)  # type: ignore[arg-type]


def test_a_shared_run_is_found_and_a_template_train_shares_is_not():
    index = held_out_index(
        8,
        {
            "train": [
                task("t1", "train", "Write the word 'banana' backwards, letter by letter. Answer with the word.")
            ],
            "val": [task("v1", "val", "Write the word 'tattoo' backwards, letter by letter. Answer with the word.")],
            "test": [task("x1", "test", "Name the capital city of the small country we discussed at length today")],
        },
    )
    assert index.leaks("Reverse it: backwards, letter by letter. Answer with the word.") == []  # train's too
    leak = index.leaks("Tip: write the WORD tattoo backwards letter by letter, always.")[0]
    assert (leak.text, leak.source) == ("write the word tattoo backwards letter by letter", "val task v1's question")
    seven = "the capital city of the small country we"
    assert index.leaks(seven.rsplit(" ", 1)[0]) == []  # seven words in a row are allowed
    assert index.leaks(f"x {seven} discussed y")[0].source == "test task x1's question"


def test_an_answer_sheet_proposal_is_invalid_before_validation_naming_the_shared_text(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    sheet = {**create("answer-sheet", SPELL), "skill_md": SHEET}
    evolve_scripted(ws, rounds=1, world=ScriptedWorld(proposals={1: sheet}))
    gate = gate_of(ws, 1)
    assert gate.meta.decision == Decision.INVALID
    assert 'shares "write the word tattoo backwards letter by letter" with val task val-01\'s question' in (
        ws.body(gate.sha) + gate.subject
    )
    assert not any(c.meta.step == Step.VALIDATE for c in ws.log("--all", first_parent=False))
    assert "answer-sheet" in (ws.root / "wiki/skill-impact.md").read_text()


def test_lint_and_watch_name_held_out_text_in_a_persons_skill(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    write(ws.root, "skills/answer-sheet/SKILL.md", SHEET)
    problems = [p for p in api.lint(ws) if "held-out text" in p.message]
    assert [p.path for p in problems] == ["skills/answer-sheet/SKILL.md"]
    assert 'shares "write the word tattoo backwards letter by letter" with val task val-01' in problems[0].message
    report = check(ws, ["skills/answer-sheet/SKILL.md"], commit=True, held_out=workspace_held_out(ws.root))
    assert any("held-out text" in p.message for p in report.problems)
    assert report.held_back == ["skills/answer-sheet/SKILL.md"]  # not committed
    write(ws.root, "skills/answer-sheet/SKILL.md", skill_md("answer-sheet", SPELL))
    assert not [p for p in api.lint(ws) if "held-out text" in p.message]


def test_a_session_quoting_a_val_question_is_not_ingested(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    session = tmp_path / "session.json"
    session.write_text(
        json.dumps(
            {
                "messages": [
                    {"role": "user", "content": "Write the word 'tattoo' backwards, letter by letter, please."},
                    {"role": "assistant", "content": "oottat"},
                ]
            }
        )
    )
    head = ws.head()
    with pytest.raises(WikiskillError, match='shares "write the word tattoo backwards letter by letter"'):
        api.ingest(ws, [session], "openai-messages", "success")
    assert ws.head() == head


def test_a_harbor_tasks_hidden_test_file_is_held_out(tmp_path):
    folder = tmp_path / "fix-mean"
    (folder / "tests").mkdir(parents=True)
    (folder / "tests/test_outputs.py").write_text("assert mean([2, 4, 9]) == 5.0, 'the mean of two four nine'\n")
    hidden = Task("fix-mean", "test", "Fix the mean function.", metadata={"harbor_dir": str(folder)})
    index = held_out_index(8, {"test": [hidden]})
    leak = index.leaks("Remember: assert mean(2, 4, 9) == 5.0: the mean of it.")[0]
    assert leak.source == "test task fix-mean's tests/test_outputs.py"


def test_a_held_out_text_exactly_leak_run_words_long_is_held_out():
    index = held_out_index(8, {"val": [task("v1", "val", "Name the river that runs through Prague town")]})
    assert index.leaks("Hint: name the river that runs through Prague town.")[0].source == "val task v1's question"
    assert index.leaks("Hint: name the river that runs through Prague.") == []


@pytest.mark.parametrize("split", ["val", "test"])
def test_a_held_out_answer_quoted_in_a_skill_is_found(split):
    answer = "The Vltava flows north through Prague and joins the Elbe at Melnik"
    index = held_out_index(8, {split: [task("h1", split, "Which river?", answer)]})
    leak = index.leaks(f"Remember: {answer.lower()}.")[0]
    assert leak.source == f"{split} task h1's answer"


def test_a_harbor_tasks_reference_solution_file_is_held_out(tmp_path):
    folder = tmp_path / "fix-mean"
    (folder / "solution").mkdir(parents=True)
    (folder / "solution/solve.sh").write_text("sed -i 's/return sum(xs) \\/ 2/return sum(xs) \\/ len(xs)/' mean.py\n")
    hidden = Task("fix-mean", "test", "Fix the mean function.", metadata={"harbor_dir": str(folder)})
    leak = held_out_index(8, {"test": [hidden]}).leaks("Do: sed -i s/return sum(xs) / 2/return sum(xs) / len(xs)/")[0]
    assert leak.source == "test task fix-mean's solution/solve.sh"


def test_a_run_two_held_out_tasks_share_is_held_out_and_one_three_share_is_a_template():
    run = "spell the word out one letter per line first"
    pair = {"val": [task("v1", "val", f"{run}: tattoo")], "test": [task("x1", "test", f"{run}: kayak")]}
    two = held_out_index(8, pair)
    assert two.leaks(f"Tip: {run}.")[0].source == "val task v1's question"
    three = held_out_index(8, {"val": [task(f"v{i}", "val", f"{run}: w{i}") for i in range(3)]})
    assert three.leaks(f"Tip: {run}.") == []
