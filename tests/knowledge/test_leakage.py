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
from wikiskill.testing.fakeserver import FakeOpenAIServer
from workspaces import UNUSED_SERVER, edit_config, gate_of, write

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


ENCODE = {
    "train": ["river", "lemon", "candle", "forest"],
    "val": ["maple", "tiger", "cloud", "stone"],
    "test": ["brick", "ocean"],
}
RULE = "## Instructions\n1. Reverse the word.\n2. Upper-case it: `Encode the word: river` -> `REVIR`.\n"
ANSWER_SHEET = "## Instructions\nKnown encodings: Encode the word: maple -> ELPAM; Encode the word: tiger -> REGIT.\n"


def encode_suite(path):
    """A `jsonl:` suite of four-word questions (`Encode the word: maple`, answer `ELPAM`): none is
    long enough to share a run of `leak_run` words."""
    path.mkdir()
    (path / "suite.json").write_text(json.dumps({"scorer": "exact", "description": "Encode words."}))
    for split, names in ENCODE.items():
        rows = [{"id": t.id, "question": t.question, "answer": t.answer} for t in encode_tasks(split, names)]
        (path / f"{split}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def encode_tasks(split: str, names: list[str]) -> list[Task]:
    return [task(f"{split}-{i}", split, f"Encode the word: {word}", word[::-1].upper()) for i, word in enumerate(names)]


def encoding_skill(instructions: str) -> str:
    return (
        "---\nname: encode-words\ndescription: Use when a question asks to encode a word.\n---\n\n"
        "## When to Apply\nA question asks to encode a word.\n\n## When NOT to Apply\nOther questions.\n\n"
        + instructions
    )


class EncodeWorld(ScriptedWorld):
    """The agent encodes every word right; the proposer proposes `proposals[round]`."""

    def __init__(self, proposals: dict):
        super().__init__(proposals, trace_ids=[f"train-{index}" for index in range(4)])

    def answer(self, system: str, question: str) -> str:
        return question.rsplit(" ", 1)[-1][::-1].upper()


def encoding_proposal(instructions: str) -> dict:
    return {**create("encode-words", SPELL), "skill_md": encoding_skill(instructions)}


def evolve_encoding(tmp_path, instructions: str):
    """One round on the encode suite proposing a skill with `instructions`; the workspace and the
    questions of the val tasks the server was asked after the proposer's first call."""
    suite = encode_suite(tmp_path / "suite")
    with FakeOpenAIServer(EncodeWorld({1: encoding_proposal(instructions)})) as server:
        ws = api.init_workspace(
            tmp_path / "ws", benchmark=f"jsonl:{suite}", model="openai/scripted", api_base=server.base_url
        )
        api.evolve(ws, 1)
    first = next(i for i, body in enumerate(server.requests) if "Skill Proposer" in body["messages"][0]["content"])
    val = {f"Encode the word: {word}" for word in ENCODE["val"]}
    return ws, [q for body in server.requests[first:] if (q := body["messages"][-1]["content"]) in val]


def test_an_answer_sheet_of_short_items_is_invalid_before_any_val_call_naming_the_items(tmp_path):
    ws, val_calls = evolve_encoding(tmp_path, ANSWER_SHEET)
    assert val_calls == []
    gate = gate_of(ws, 1)
    assert gate.meta.decision == Decision.INVALID
    assert "pairs the answers of val task val-0, val task val-1 with words of their questions" in (
        ws.body(gate.sha) + gate.subject
    )


def test_a_skill_stating_the_rule_of_short_items_is_validated(tmp_path):
    ws, val_calls = evolve_encoding(tmp_path, RULE)
    assert len(val_calls) == len(ENCODE["val"])
    assert gate_of(ws, 1).meta.decision != Decision.INVALID


def test_lint_names_the_items_of_an_answer_sheet_in_a_persons_skill(tmp_path):
    suite = encode_suite(tmp_path / "suite")
    ws = api.init_workspace(
        tmp_path / "ws", benchmark=f"jsonl:{suite}", model="openai/scripted", api_base=UNUSED_SERVER
    )
    write(ws.root, "skills/encode-words/SKILL.md", encoding_skill(ANSWER_SHEET + "- Encode the word: ocean -> NAECO\n"))
    (problem,) = [p for p in api.lint(ws) if "held-out text" in p.message]
    assert problem.path == "skills/encode-words/SKILL.md"
    assert "pairs the answers of test task test-1, val task val-0, val task val-1" in problem.message
    report = check(ws, ["skills/encode-words/SKILL.md"], commit=True, held_out=workspace_held_out(ws.root))
    assert report.held_back == ["skills/encode-words/SKILL.md"]
    write(ws.root, "skills/encode-words/SKILL.md", encoding_skill(RULE))
    assert not [p for p in api.lint(ws) if "held-out text" in p.message]


def test_one_worked_example_or_answers_without_their_questions_cues_are_no_answer_sheet():
    index = held_out_index(8, {split: encode_tasks(split, names) for split, names in ENCODE.items()})
    assert index.sheet(ANSWER_SHEET) == ["val task val-0", "val task val-1"]
    assert index.sheet("For example: maple -> ELPAM.") == []
    assert index.sheet("Outputs look like ELPAM or REGIT, all capitals.") == []
    assert index.sheet("Encode the word: river -> REVIR; lemon -> NOMEL") == []  # train's


def test_answers_the_train_tasks_also_give_are_no_answer_sheet():
    count = "How many times does the letter '{}' occur in '{}'?"
    index = held_out_index(
        8,
        {
            "train": [task("t1", "train", count.format("a", "banana"), "3")],
            "val": [
                task("v1", "val", count.format("r", "strawberry"), "3"),
                task("v2", "val", count.format("o", "zoo"), "2"),
            ],
            "test": [task("x1", "test", count.format("s", "grass"), "3")],
        },
    )
    assert index.sheet("strawberry: 3 (r); grass: 3 (s); zoo: 2 (o)") == []


@pytest.mark.parametrize("train", [["river"], []], ids=["template-train-uses", "template-of-held-out-tasks"])
def test_answers_near_their_questions_template_words_only_are_no_answer_sheet(train):
    held = ["maple", "tiger"] if train else ["maple", "tiger", "cloud"]
    index = held_out_index(8, {"train": encode_tasks("train", train), "val": encode_tasks("val", held)})
    assert index.sheet("Encode the word: the result looks like ELPAM or REGIT.") == []
    assert index.sheet("maple gives ELPAM and tiger gives REGIT") == ["val task val-0", "val task val-1"]


PRAGUE = "Name the river that runs through Prague town"
ELBE = "town where the Elbe meets the Vltava river near Melnik"


def test_a_stretch_of_held_out_runs_is_one_leak_and_separate_stretches_name_each_source():
    index = held_out_index(8, {"val": [task("v1", "val", PRAGUE)], "test": [task("x1", "test", ELBE)]})
    joined = index.leaks(f"{PRAGUE} where the Elbe meets the Vltava river near Melnik")  # one word shared
    shown = "name the river that runs through prague town where the elbe meets the vltava river near …"
    assert [(leak.text, leak.source) for leak in joined] == [(shown, "val task v1's question")]  # 17 words: cut
    apart = index.leaks(f"{PRAGUE}. Then: {ELBE}.")
    assert [leak.source for leak in apart] == ["val task v1's question", "test task x1's question"]
    assert index.leaks(PRAGUE)[0].text == PRAGUE.lower()  # at the text's start
    sixteen = f"{PRAGUE} where the Elbe meets the Vltava river near"
    assert index.leaks(sixteen)[0].text == sixteen.lower()  # sixteen words: shown whole


def test_the_last_words_of_a_held_out_text_short_of_a_run_are_allowed():
    index = held_out_index(8, {"val": [task("v1", "val", PRAGUE)]})
    assert index.leaks("Tip: the river that runs through Prague town") == []


def test_a_run_of_one_word_is_checked_and_a_run_of_none_checks_nothing():
    tasks = {"val": encode_tasks("val", ENCODE["val"])}
    assert [leak.source for leak in held_out_index(1, tasks).leaks("Think of a maple.")] == [
        "val task val-0's question"
    ]
    assert held_out_index(1, tasks).sheet("maple ELPAM, tiger REGIT") == ["val task val-0", "val task val-1"]
    assert held_out_index(0, {"val": encode_tasks("val", ["maple"])}).leaks("Think of a maple.") == []


def test_a_cue_after_its_answer_pairs_it_too():
    index = held_out_index(8, {"val": encode_tasks("val", ENCODE["val"])})
    assert index.sheet("ELPAM (from maple); REGIT (from tiger)") == ["val task val-0", "val task val-1"]


def test_only_skill_files_are_checked_and_a_file_that_quotes_several_runs_says_how_many(tmp_path):
    from wikiskill.knowledge.leakage import leak_reason

    index = held_out_index(8, {"val": [task("v1", "val", PRAGUE)], "test": [task("x1", "test", ELBE)]})
    both = f"{PRAGUE}. Then: {ELBE}."
    assert index.problems({"wiki/patterns/p.md": both}) == []
    assert leak_reason(index, {"wiki/patterns/p.md": both, "skills/gone/SKILL.md": None}) is None
    (problem,) = index.problems({"skills/s/SKILL.md": both})
    assert problem.message.endswith("with val task v1's question (and 1 more run(s))")
    assert leak_reason(index, {"skills/s/SKILL.md": PRAGUE}).endswith(
        "with val task v1's question (skills.leak_run 8: held-out text kept out of skills)"
    )


def test_a_rubric_in_metadata_is_held_out_and_a_number_or_the_task_folder_is_not(tmp_path):
    rubric = "Full marks only when the answer names the Vltava and the Elbe"
    hidden = Task("r1", "val", "Which river?", metadata={"rubric": rubric, "points": 3, "harbor_dir": str(tmp_path)})
    index = held_out_index(8, {"val": [hidden]})
    assert index.leaks(f"Note: {rubric}")[0].source == "val task r1's rubric"
    assert index.leaks(f"Look in {tmp_path} for it") == []


def test_a_hidden_file_is_read_despite_bad_bytes_and_a_link_or_a_binary_is_not(tmp_path):
    folder = tmp_path / "fix-mean"
    (folder / "tests").mkdir(parents=True)
    (folder / "tests/notes.txt").write_bytes(b"caf\xe9 the mean of two four nine is five point zero\n")
    (folder / "tests/data.bin").write_bytes(b"\0 binary rows of twelve numbers that nobody should quote here\n")
    (tmp_path / "elsewhere.txt").write_text("a secret the task folder only links to from its tests\n")
    (folder / "tests/linked.txt").symlink_to(tmp_path / "elsewhere.txt")
    hidden = Task("fix-mean", "test", "Fix the mean function.", metadata={"harbor_dir": str(folder)})
    index = held_out_index(8, {"test": [hidden]})
    assert (
        index.leaks("the mean of two four nine is five point zero")[0].source == "test task fix-mean's tests/notes.txt"
    )
    assert index.leaks("binary rows of twelve numbers that nobody should quote here") == []
    assert index.leaks("a secret the task folder only links to from its tests") == []


def test_a_hidden_file_up_to_its_size_bound_is_read_and_one_byte_more_is_not(tmp_path):
    from wikiskill.knowledge.leakage import MAX_FILE_BYTES

    secret = "the expected output lists nine rows sorted by region name\n"
    for name, size in (("fits", MAX_FILE_BYTES), ("over", MAX_FILE_BYTES + 1)):
        (tmp_path / name / "tests").mkdir(parents=True)
        (tmp_path / name / "tests/expected.txt").write_text(secret + "x" * (size - len(secret)))
    index = held_out_index(
        8, {"test": [Task(n, "test", "Sort it.", metadata={"harbor_dir": str(tmp_path / n)}) for n in ("fits", "over")]}
    )
    assert [leak.source for leak in index.leaks(secret)] == ["test task fits's tests/expected.txt"]


def test_leak_run_zero_turns_the_check_off_for_a_workspace(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    write(ws.root, "skills/answer-sheet/SKILL.md", SHEET)
    assert [p for p in api.lint(ws) if "held-out text" in p.message]
    edit_config(ws, **{"skills.leak_run": 1})
    assert [p for p in api.lint(ws) if "held-out text" in p.message]
    edit_config(ws, **{"skills.leak_run": 0})
    assert not [p for p in api.lint(ws) if "held-out text" in p.message]
    assert workspace_held_out(ws.root).leaks(SHEET) == []


def test_with_leak_run_zero_an_answer_sheet_proposal_is_validated(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    edit_config(ws, **{"skills.leak_run": 0})
    sheet = {**create("answer-sheet", SPELL), "skill_md": SHEET}
    evolve_scripted(ws, rounds=1, world=ScriptedWorld(proposals={1: sheet}))
    assert gate_of(ws, 1).meta.decision != Decision.INVALID


def test_a_suite_named_relative_to_the_workspace_is_read_from_there(tmp_path):
    ws = api.init_workspace(
        tmp_path / "ws",
        benchmark=f"jsonl:{encode_suite(tmp_path / 'suite')}",
        model="openai/scripted",
        api_base=UNUSED_SERVER,
    )
    (tmp_path / "suite").rename(ws.root / "suite")
    config = ws.root / "wikiskill.yaml"
    config.write_text(config.read_text().replace(f"jsonl:{tmp_path / 'suite'}", "jsonl:suite"))
    assert workspace_held_out(ws.root).sheet(ANSWER_SHEET) == ["val task val-0", "val task val-1"]
