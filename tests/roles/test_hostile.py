"""Hostile and malformed model output never crashes a step, never writes outside the allowed
paths (wiki/ for the maintainer, skills/<name>/ for a proposal), is never half-applied, and every
rejection is recorded with its reason.

The property tests share one workspace with planted traps: symlinks committed under skills/ and
wiki/ that point outside, a file where a skill folder would go, a page whose front matter is not
a mapping, a broken trace, and val material that no role may read.
"""

import json
import re
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from conftest import git
from hostile_input import HOSTILE_NAMES, PROPERTY, edit, json_value, page_text, text
from inprocess import scripted_workspace
from scripted import skill_md
from wikiskill.contracts.roles import ProposerContext
from wikiskill.knowledge.codetext import code_only
from wikiskill.knowledge.lint import lint_files
from wikiskill.knowledge.pages import Section, parse_body, parse_page
from wikiskill.knowledge.proposals import InvalidProposal, prepare_proposal
from wikiskill.knowledge.skills import NAME_PATTERN, skill_problems, split_front_matter
from wikiskill.knowledge.wiki import (
    INDEX,
    LOG,
    Derivation,
    apply_maintainer_output,
    first_sentence,
    page_path,
    read_wiki,
)
from wikiskill.knowledge.wiki_requests import MaintainerOutput
from wikiskill.llm.chat import Reply, ToolCall
from wikiskill.roles.agent import extract_action, extract_answer
from wikiskill.roles.maintainer import parse_output
from wikiskill.roles.proposer import Proposer
from wikiskill.roles.sandbox import Sandbox
from wikiskill.store.traces import Trajectory
from wikiskill.store.workspace import MAIN

CANARIES = ("OUTSIDE-CANARY", "VAL-CANARY", "TEST-CANARY")


def git_as_person(root: Path, *args: str) -> str:
    return git(root, "-c", "user.name=Person", "-c", "user.email=person@example.invalid", *args)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """A workspace with traps committed by a person, and the folder outside it."""
    root = tmp_path_factory.mktemp("planted")
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE-CANARY\n")
    ws = scripted_workspace(root / "ws")
    files = {
        "skills/spell-letters/SKILL.md": skill_md("spell-letters", "MARKER"),
        "skills/spell-letters/PURPOSE.md": "# spell-letters\n",
        "skills/notadir": "a file where a skill folder would go\n",
        "wiki/patterns/trap.md": "---\n- not\n- a mapping\n---\nbody\n",
        "wiki/patterns/odd.md": "---\nevidence: [[1], {a: b}, 3, x]\ncreated: 2024-01-01\n---\nbody\n",
        "raw/r001/train/train-00.json": Trajectory(
            task_id="train-00", split="train", kind="qa", question="TRAIN-TEXT?", prediction="a"
        ).to_json(),
        "raw/r001/train/broken.json": "{not json",
        "raw/r001/val.jsonl": '{"id": "val-01", "note": "VAL-CANARY"}\n',
        "raw/baseline/val.jsonl": '{"id": "val-01", "note": "VAL-CANARY"}\n',
        "wiki/val/x.md": "VAL-CANARY\n",
        "raw/test/x.json": "TEST-CANARY\n",
    }
    for path, content in files.items():
        (ws.root / path).parent.mkdir(parents=True, exist_ok=True)
        (ws.root / path).write_text(content)
    (ws.root / "skills/dirlink").symlink_to("../../outside")
    (ws.root / "skills/evil").mkdir()
    (ws.root / "skills/evil/SKILL.md").symlink_to("../../../outside/secret.txt")
    (ws.root / "wiki/patterns/linked.md").symlink_to("../../../outside/secret.txt")
    git_as_person(ws.root, "add", "-A")
    git_as_person(ws.root, "commit", "-qm", "planted traps")
    return ws, outside


def outside_snapshot(outside: Path) -> dict:
    return {str(path): path.read_bytes() for path in outside.rglob("*")}


def commit_and_check(ws, outside, changes: dict, allowed: re.Pattern) -> None:
    """Publish `changes` on main like a step, check what moved, then put main back."""
    before, snapshot = ws.head(), outside_snapshot(outside)
    sha = ws.commit(changes, "step\n")
    changed = ws.changed_paths(before, sha)
    assert all(allowed.fullmatch(path) for path in changed), changed
    assert outside_snapshot(outside) == snapshot
    assert git(ws.root, "status", "--porcelain") == ""
    ws.commit({}, "restore\n", base=before)
    assert git(ws.root, "status", "--porcelain") == ""


# -- the maintainer ---------------------------------------------------------------------------------

SECTIONED = "# T\n\n## Description\nd\n\n## Root cause\nr\n\n## Evidence\ntrain-00 did x\n\n## Fix\nf\n"
maintainer_json = st.fixed_dictionaries(
    {"append_log": text},
    optional={
        "create_patterns": st.lists(
            st.fixed_dictionaries(
                {"name": text, "content": page_text | st.just(SECTIONED)},
                optional={"summary": text, "evidence": st.lists(st.sampled_from(["train-00", "train-01", "train-09"]))},
            ),
            max_size=3,
        ),
        "update_patterns": st.lists(
            st.fixed_dictionaries(
                {
                    "name": st.sampled_from(["trap", "odd", "linked", "linked.md", "../patterns/trap.md"]) | text,
                    "edits": st.lists(edit, max_size=3),
                },
                optional={"add_evidence": text, "evidence": st.lists(st.sampled_from(["train-00", "train-09"]))},
            ),
            max_size=3,
        ),
        "extra": json_value,
    },
)
reply_text = st.one_of(
    st.text(max_size=200),
    json_value.map(json.dumps),
    maintainer_json.map(json.dumps),
    maintainer_json.map(lambda d: json.dumps(d)[: len(json.dumps(d)) // 2]),
    st.builds(
        lambda n, ws: json.dumps({"update_index": 1, "append_log": None, "create_patterns": "x"}) * n,
        st.integers(1, 3),
        st.none(),
    ),
    st.integers(1, 5000).map(lambda n: "[" * n),
    st.integers(1, 3000).map(lambda n: '{"a":' * n),
    maintainer_json.map(lambda d: f"Here you go:\n```json\n{json.dumps(d)}\n```\nDone."),
)


@PROPERTY
@given(reply_text)
def test_maintainer_reply_parses_or_is_refused_with_a_reason(reply):
    try:
        output = parse_output(reply)
    except ValueError as refused:
        assert str(refused).strip()
        return
    assert isinstance(output, MaintainerOutput)


@PROPERTY
@given(maintainer_json)
def test_maintainer_output_writes_only_valid_pages_and_reports_every_refusal(planted, raw):
    ws, outside = planted
    output = MaintainerOutput.model_validate(raw)
    wiki = read_wiki(ws.read_files(MAIN, "wiki"))
    update = apply_maintainer_output(output, wiki, 2, ["train-00", "train-01"], ["train-00", "train-01", "train-09"])
    for path, content in update.changes.items():
        assert path in (INDEX, LOG) or re.fullmatch(r"wiki/patterns/[^/]+\.md", path), path
        if path.startswith("wiki/patterns/"):
            slug = path.removeprefix("wiki/patterns/").removesuffix(".md")
            page = parse_page(slug, content)
            assert page.missing_sections() == [] and page.meta.evidence
            assert {e.task for e in page.meta.evidence} - {
                e.task for e in wiki.pages.get(slug, page).meta.evidence
            } <= {"train-00", "train-01"}
            assert NAME_PATTERN.fullmatch(slug)
            assert page.meta.summary or slug in wiki.pages  # a new page has one, given or derived
            derived = update.derived.get(slug, Derivation())
            assert derived.summary in ("", page.meta.summary)  # a later request may have set it
    assert {page_path(slug) for slug in update.derived} <= set(update.changes)
    assert "train-09" not in "".join(update.changes.values())
    requests = [*output.create_patterns, *output.update_patterns]
    pages_refused = [reason for reason in update.refused if not reason.startswith("append_log:")]
    assert len(update.report) + len(pages_refused) == len(requests)
    assert (
        lint_files(
            {
                **{f"wiki/{p}": t for p, t in ws.read_files(MAIN, "wiki").items()},
                **{p: t for p, t in update.changes.items() if t is not None},
            }
        )
        == []
    )
    commit_and_check(ws, outside, update.changes, re.compile(r"wiki/.+"))


def sectioned(description: str, cites: str) -> str:
    return f"# T\n\n## Description\n{description}\n\n## Root cause\nr\n\n## Evidence\n{cites} did x\n\n## Fix\nf\n"


derivable_create = st.fixed_dictionaries(
    {
        "name": st.from_regex(r"new-[a-z]{1,8}", fullmatch=True),
        "content": st.builds(
            sectioned, text, st.sampled_from(["train-00", "train-00 and train-01", "train-09", "nobody"])
        ),
    },
    optional={"summary": text, "evidence": st.lists(st.sampled_from(["train-00", "train-01", "train-09"]), max_size=2)},
)


@PROPERTY
@given(st.lists(derivable_create, min_size=1, max_size=3, unique_by=lambda create: create["name"]))
def test_a_page_missing_a_derivable_field_is_written_with_it_derived_and_reported(planted, creates):
    ws, outside = planted
    output = MaintainerOutput(create_patterns=creates, append_log="log")
    update = apply_maintainer_output(
        output,
        read_wiki(ws.read_files(MAIN, "wiki")),
        2,
        ["train-00", "train-01"],
        ["train-00", "train-01", "train-09"],
    )
    for request in output.create_patterns:
        derived = update.derived.get(request.name, Derivation())
        if page_path(request.name) not in update.changes:
            reason = next(line for line in update.refused if line.startswith(f"create {request.name!r}: "))
            description = parse_body(request.content)[1].get(Section.DESCRIPTION, "")
            assert "no summary" not in reason or not first_sentence(description)  # never refused for what derives
            assert not derived
            event("refused")
            continue
        page = parse_page(request.name, update.changes[page_path(request.name)])
        given_summary = " ".join(request.summary.split())[:400]
        assert page.meta.summary == (given_summary or derived.summary) != ""
        assert bool(derived.summary) == (not given_summary)
        assert derived.evidence == sorted(set(page.meta.tasks()) - set(request.evidence))
        assert set(page.meta.tasks()) <= {"train-00", "train-01"}
        assert "train-09" not in request.content + "".join(request.evidence)
        event(f"written; summary derived: {bool(derived.summary)}; evidence derived: {bool(derived.evidence)}")
    commit_and_check(ws, outside, update.changes, re.compile(r"wiki/.+"))


# -- the proposer and its proposals ------------------------------------------------------------------

plausible_name = st.from_regex(r"[A-Za-z0-9 _.-]{1,30}", fullmatch=True) | st.sampled_from(HOSTILE_NAMES)
plausible_edit = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["append", "replace", "insert_after"]),
        "content": page_text,
        "target": st.sampled_from(["## Instructions", "---", "MARKER", "name: spell-letters", "description:"]) | text,
        "file": st.sampled_from(["SKILL.md", "PURPOSE.md"]),
    }
)
proposal_json = st.one_of(
    json_value,
    st.fixed_dictionaries(
        {"action": st.sampled_from(["create", "patch", "no_action", "delete"]) | json_value},
        optional={
            "name": text | json_value,
            "skill_md": page_text | json_value,
            "purpose_md": text | json_value,
            "edits": st.lists(edit, max_size=3) | json_value,
            "rationale": text | json_value,
        },
    ),
    st.fixed_dictionaries(
        {
            "action": st.just("create"),
            "name": plausible_name | text,
            "skill_md": st.builds(skill_md, plausible_name | text, text) | page_text,
        },
        optional={"purpose_md": text, "rationale": text},
    ),
    st.fixed_dictionaries(
        {
            "action": st.just("patch"),
            "edits": st.lists(plausible_edit | edit, min_size=1, max_size=3),
            "name": st.sampled_from(
                ["spell-letters", "Spell Letters", "../../spell-letters", "evil", "notadir", "dirlink"]
            )
            | text,
        },
        optional={"rationale": text},
    ),
)


@settings(PROPERTY, max_examples=60)
@given(proposal_json)
def test_a_proposal_is_applied_whole_inside_its_folder_or_rejected_with_a_reason(planted, raw):
    ws, outside = planted
    skills = ws.read_files(MAIN, "skills")
    try:
        proposal = prepare_proposal(raw, skills, 3)
    except InvalidProposal as rejected:
        assert rejected.reason.strip() and rejected.action
        event("rejected")
        return
    event(proposal.action)
    if proposal.action == "no_action":
        assert proposal.changes == {}
        return
    folder = f"skills/{proposal.name}"
    assert NAME_PATTERN.fullmatch(proposal.name)
    assert set(proposal.changes) == {f"{folder}/SKILL.md", f"{folder}/PURPOSE.md"}
    skill_text = proposal.changes[f"{folder}/SKILL.md"]
    assert split_front_matter(skill_text)[0]["name"] == proposal.name
    assert skill_problems(skill_text, proposal.name) == []
    commit_and_check(ws, outside, proposal.changes, re.compile(re.escape(folder) + r"/.+"))


class TurnsModel:
    """Replies with scripted tool calls, one list per turn, and records what the role sent."""

    def __init__(self, turns: list[list[dict]]):
        self.turns = list(turns)
        self.messages: list[dict] = []

    def complete(self, messages, tools=None, response_model=None, call_required=False) -> Reply:
        self.messages = messages
        if not self.turns:
            return Reply("I am done.")
        calls = self.turns.pop(0)
        return Reply(
            None,
            [
                ToolCall(f"c{n}", str(call["name"]), call["arguments"], json.dumps(call["arguments"]))
                for n, call in enumerate(calls)
            ],
        )

    async def acomplete(self, messages, tools=None, response_model=None, call_required=False) -> Reply:
        return self.complete(messages, tools)


tool_call = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["read_file", "list_files", "finish", "rm", ""]),
        "arguments": st.one_of(
            json_value,
            st.fixed_dictionaries({"path": st.sampled_from(HOSTILE_NAMES) | json_value}),
            st.fixed_dictionaries({"proposal": proposal_json | json_value.map(json.dumps)}),
        ),
    }
)


@PROPERTY
@given(st.lists(st.lists(tool_call, min_size=1, max_size=3), max_size=8))
def test_the_proposer_survives_any_tool_calls_and_reads_only_train_material(planted, turns):
    ws, _ = planted
    model = TurnsModel(turns)
    context = ProposerContext(round=1, incumbent=0.5, train_score=0.5)
    result = Proposer(model, Sandbox(ws, MAIN), max_turns=10, min_trace_reads=1).run(context)
    assert result.proposal is None or isinstance(result.proposal, dict)
    assert result.proposal is not None or result.error
    for message in model.messages:
        if message["role"] == "tool":
            assert not any(canary in message["content"] for canary in CANARIES), message["content"][:200]


def test_the_sandbox_refuses_escapes_symlinks_and_val_material(planted):
    ws, _ = planted
    sandbox = Sandbox(ws, MAIN)
    refused = {
        "../../outside/secret.txt": "`..`",
        "/etc/passwd": "absolute",
        "wiki/../raw/r001/val.jsonl": "`..`",
        "raw/r001/val.jsonl": "validation and test",
        "raw/baseline/val.jsonl": "validation and test",
        "wiki/val/x.md": "validation and test",
        "raw/test/x.json": "validation and test",
        "wiki/patterns/linked.md": "symbolic link",
        "skills/evil/SKILL.md": "symbolic link",
        "skills/dirlink/secret.txt": "no file",
        "traces/broken": "unreadable",
        "traces/val-01": "no train trace",
        "wiki/index.md\0": "control characters",
        ".git/config": "not readable",
        "wikiskill.yaml": "not readable",
    }
    for path, reason in refused.items():
        with pytest.raises(LookupError, match=reason):
            sandbox.read(path)
    text, is_trace = sandbox.read("traces/train-00")
    assert is_trace and "TRAIN-TEXT" in text
    assert sandbox.read("raw/r001/train/train-00.json")[0] == text
    assert "skills/dirlink" in sandbox.list("skills")
    for path in ("..", "/", "raw", "wiki/../raw"):
        with pytest.raises(LookupError):
            sandbox.list(path)


# -- the task agent -------------------------------------------------------------------------------

agent_reply = st.one_of(
    st.none(),
    st.text(max_size=300),
    st.lists(
        st.sampled_from(["<answer>", "</answer>", "<action>", "</action>", "<ANSWER>", "x", "\n", " ", "go north"]),
        max_size=300,
    ).map("".join),
    st.integers(0, 20_000).map(lambda n: "<answer>" + "z" * n),
)


@PROPERTY
@given(agent_reply)
def test_agent_reply_extraction_never_fails(reply):
    answer = extract_answer(reply)
    action = extract_action(reply)
    assert answer is None or isinstance(answer, str)
    assert isinstance(action, str) and "\n" not in action


# -- the maintainer's log section: prose, not code --------------------------------------------------

no_fence = st.text(max_size=80).filter(lambda line: not line.lstrip().startswith(("```", "~~~")))
code_line = st.one_of(
    no_fence,
    st.sampled_from(
        [
            "def has_close_elements(numbers, threshold):",
            "    for i in range(len(numbers)):",
            "return False",
            "import math",
            "x = [n * n for n in numbers]",
            "}",
            "    pass",
            "print(result)",
            "#include <stdio.h>",
        ]
    ),
)
fenced = st.builds(
    lambda lang, lines: "\n".join([f"```{lang}", *lines, "```"]),
    st.sampled_from(["", "python", "bash", "js"]),
    st.lists(code_line, min_size=1, max_size=30),
)
word = st.from_regex(r"[a-z]{3,10}", fullmatch=True)
sentence = st.builds(
    lambda first, words, span, end: " ".join([first.capitalize(), *words, *([f"`{span}()`"] if span else [])]) + end,
    word,
    st.lists(word, min_size=2, max_size=12),
    st.none() | st.from_regex(r"[a-z_]{3,12}", fullmatch=True),
    st.sampled_from([".", "", ":", " (train-01)."]),
)
prose = st.lists(st.one_of(sentence, sentence.map(lambda s: f"- {s}"), st.just("")), min_size=1, max_size=8).map(
    "\n".join
)
log_text = st.one_of(
    text,
    fenced,
    prose,
    st.builds(lambda a, b: f"{a}\n{b}", prose, fenced),
    st.integers(1, 3000).map(lambda n: "```\n" * n),
    st.integers(1, 3000).map(lambda n: "    x\n" * n),
)


@PROPERTY
@given(st.one_of(sentence, st.just("")), fenced)
def test_a_fenced_block_with_at_most_a_line_of_prose_is_code_only(line, block):
    assert code_only(f"{line}\n{block}") and code_only(f"{block}\n{line}")


@PROPERTY
@given(prose)
def test_sentences_and_lists_that_name_code_in_backticks_are_prose(text):
    assert not code_only(text)


@PROPERTY
@given(log_text)
def test_a_code_only_log_section_is_refused_whatever_the_text_and_never_written(planted, log):
    ws, _ = planted
    wiki = read_wiki(ws.read_files(MAIN, "wiki"))
    update = apply_maintainer_output(MaintainerOutput(append_log=log), wiki, 2, ["train-00"], ["train-00"])
    written = update.changes[LOG].removeprefix(wiki.log.rstrip()).split("## Round 2", 1)[1].strip()
    refused = [reason for reason in update.refused if reason.startswith("append_log:")]
    event(f"refused: {bool(refused)}")
    if code_only(log.strip()[:20_000]):
        assert refused and "not prose about the round" in refused[0] and written.startswith("(the maintainer's log")
    else:
        assert not refused and written == (log.strip()[:20_000].strip() or "(no summary given)")
