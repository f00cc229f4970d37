"""Three rounds through the CLI and litellm against a local scripted server, with a maintainer
that writes the way real models do: page names as `x.md` and `patterns/x.md`, links in both
forms, and a junk page with no sections. The wiki must stay lint-clean after every round."""

import json
import re

import pytest
from typer.testing import CliRunner

from conftest import git
from scripted import MAINTAINER_REPLY, REVERSAL_PAGE, ScriptedWorld, evolve_through_cli
from wikiskill.cli import app
from wikiskill.integrations.host import SkillSet
from wikiskill.knowledge.pages import Section, parse_page
from wikiskill.testing.fakeserver import FakeOpenAIServer

SECTIONS = (
    "## Description\n{d}\n\n## Root cause\nRead as a whole.\n\n"
    "## Evidence\n{task}: answered unreversed.\n\n## Fix\nSpell it.\n"
)


def page(name: str, task: str, description: str = "Words come back unreversed.", **fields) -> dict:
    return {
        "name": name,
        "summary": f"{name} + cause + fix",
        "evidence": [task],
        "content": "# Reversal\n\n" + SECTIONS.format(d=description, task=task),
        **fields,
    }


class NamingWorld(ScriptedWorld):
    """Maintainer replies by call: round 1 names its page `Reversal-Slips.md` and adds a junk page
    (refused, retried, refused again); round 2 updates `patterns/reversal-slips.md` and links it
    as `patterns/reversal-slips.md`; round 3 cites a task id it was not shown, twice."""

    def __init__(self):
        super().__init__()
        self.maintainer_calls = 0

    def __call__(self, body):
        messages = body["messages"]
        if not messages[0]["content"].startswith("You are a Wiki Maintainer Agent"):
            return super().__call__(body)
        self.maintainer_calls += 1
        shown = re.findall(r"^# Trace (\S+)", messages[1]["content"], re.MULTILINE)
        junk = {"name": "cabbage", "content": "reversed word only"}
        replies = {
            1: {"create_patterns": [page("Reversal-Slips.md", shown[0]), junk], "append_log": "r1"},
            2: {"create_patterns": [page("Reversal-Slips.md", shown[0]), junk], "append_log": "r1 again"},
            3: {
                "update_patterns": [
                    {
                        "name": "patterns/reversal-slips.md",
                        "evidence": [shown[-1]],
                        "add_evidence": f"{shown[-1]}: also unreversed.",
                    }
                ],
                "create_patterns": [
                    page(
                        "patterns/long-words.md",
                        shown[0],
                        "See [slips](patterns/reversal-slips.md) and [the index](../index.md) and [gone](ghost.md).",
                    )
                ],
                "append_log": "r2",
            },
            4: {
                "create_patterns": [page("unseen", "train-99")],
                "append_log": "r3",
                "update_patterns": [{"name": "reversal-slips.md", "summary": "slips, summarised again"}],
            },
        }
        replies[5] = replies[4]  # the retry repeats the refused page
        return json.dumps(replies.get(self.maintainer_calls, {"append_log": "nothing new"}))


@pytest.fixture(scope="module")
def rounds(tmp_path_factory):
    runner = CliRunner()
    world = NamingWorld()
    lints = []
    with FakeOpenAIServer(world) as server:
        ws = tmp_path_factory.mktemp("wiki") / "ws"
        result = runner.invoke(
            app,
            [
                "init",
                str(ws),
                "--benchmark",
                "example-qa",
                "--model",
                "openai/fake-model",
                "--api-base",
                server.base_url,
            ],
        )
        assert result.exit_code == 0, result.output
        for _ in range(3):
            result = runner.invoke(app, ["-C", str(ws), "evolve", "--rounds", "1"])
            assert result.exit_code == 0, result.output
            lints.append(runner.invoke(app, ["-C", str(ws), "lint"]))
        yield ws, lints, server.requests


def maintain_bodies(ws) -> list[str]:
    return git(ws, "log", "--reverse", "--grep=maintain", "--format=%B%x1e", "main").split("\x1e")[:-1]


def test_lint_is_clean_after_every_round(rounds):
    ws, lints, _ = rounds
    assert [(result.exit_code, result.output.strip()) for result in lints] == [(0, "no problems")] * 3


def test_names_given_as_x_md_and_patterns_x_md_reach_one_page(rounds):
    ws, *_ = rounds
    assert sorted(path.name for path in (ws / "wiki/patterns").glob("*.md")) == ["long-words.md", "reversal-slips.md"]
    slips = parse_page("reversal-slips", (ws / "wiki/patterns/reversal-slips.md").read_text())
    assert slips.meta.first_seen == 1 and slips.meta.last_seen == 2
    assert slips.meta.summary == "slips, summarised again"
    assert len(slips.meta.tasks()) == 2 and "also unreversed" in slips.sections[Section.EVIDENCE]
    text = (ws / "wiki/patterns/reversal-slips.md").read_text()
    assert f"_Seen in 2 episode(s), rounds 1-2: {', '.join(slips.meta.tasks())}._" in text
    long_words = (ws / "wiki/patterns/long-words.md").read_text()
    assert "[slips](reversal-slips.md)" in long_words and "[the index](../index.md)" in long_words
    assert "ghost" not in long_words and "and gone." in long_words
    index = (ws / "wiki/index.md").read_text()
    assert "(patterns/reversal-slips.md): slips, summarised again (2 episode(s), rounds 1-2)" in index


def test_a_junk_page_is_refused_and_the_retry_is_in_the_maintain_commit(rounds):
    ws, _, requests = rounds
    first = maintain_bodies(ws)[0]
    assert "Wikiskill-Attempts: 2" in first
    assert "- retried after: create 'cabbage': missing section(s): ## Root cause, ## Evidence, ## Fix" in first
    assert "- refused, not written: create 'cabbage': missing section(s)" in first
    assert not (ws / "wiki/patterns/cabbage.md").exists()
    retry = [r for r in requests if r["messages"][0]["content"].startswith("You are a Wiki Maintainer Agent")][1]
    assert "create 'cabbage': missing section(s)" in retry["messages"][-1]["content"]


def test_a_page_citing_a_task_it_was_not_shown_is_refused(rounds):
    ws, *_ = rounds
    third = maintain_bodies(ws)[2]
    assert re.search(r"refused, not written: create 'unseen': cites task ids it was not shown: train-99", third)
    assert not (ws / "wiki/patterns/unseen.md").exists()


def test_the_maintainer_prompt_shows_the_schema_generated_from_the_model(rounds):
    *_, requests = rounds
    system = next(r for r in requests if r["messages"][0]["content"].startswith("You are a Wiki Maintainer Agent"))
    assert '"add_evidence"' in system["messages"][0]["content"]
    assert "One line for the index: the problem + its root cause + the fix" in system["messages"][0]["content"]


def test_search_ranks_pages_skills_and_traces_with_path_and_snippet(rounds):
    ws, *_ = rounds
    runner = CliRunner()
    wiki = runner.invoke(app, ["-C", str(ws), "search", "long words"])
    assert wiki.exit_code == 0
    assert wiki.output.splitlines()[0].split()[1] == "wiki/patterns/long-words.md"
    skills = runner.invoke(app, ["-C", str(ws), "search", "spell letter by letter", "--in", "skills"])
    assert "skills/spell-letters/SKILL.md" in skills.output and "letter" in skills.output
    traces = runner.invoke(app, ["-C", str(ws), "search", "strawberry backwards", "--in", "traces", "--limit", "1"])
    first = traces.output.splitlines()
    assert len(first) == 1 and re.search(r"raw/r00\d/train/train-\d\d\.json .*strawberry", first[0])
    nothing = runner.invoke(app, ["-C", str(ws), "search", "zzzqqq"])
    assert nothing.exit_code == 0 and nothing.output.strip() == "no matches"
    bad = runner.invoke(app, ["-C", str(ws), "search", "x", "--in", "val"])
    assert bad.exit_code == 1 and "unknown corpus 'val': use wiki, skills or traces" in bad.output


def test_the_host_api_searches_at_its_ref(rounds):
    ws, *_ = rounds
    skills = SkillSet.open(ws, ref="round/001")
    hits = skills.search("reversal", corpus="wiki")
    assert [hit.path for hit in hits] == ["wiki/patterns/reversal-slips.md"]  # long-words came in round 2
    assert SkillSet.open(ws).search("spell")[0].path == "skills/spell-letters/SKILL.md"


def test_a_page_without_summary_or_evidence_is_written_in_one_attempt_and_the_commit_says_what_was_derived(tmp_path):
    reply = {**MAINTAINER_REPLY, "create_patterns": [{"name": "reversal-slips", "content": REVERSAL_PAGE}]}
    with FakeOpenAIServer(ScriptedWorld(maintainer_reply=reply)) as server:
        evolve_through_cli(CliRunner(), tmp_path / "ws", server.base_url, rounds=1)
        maintainer = [r for r in server.requests if r["messages"][0]["content"].startswith("You are a Wiki Maintainer")]
    ws = tmp_path / "ws"
    shown = re.search(r"^# Trace (\S+)", maintainer[0]["messages"][1]["content"], re.MULTILINE).group(1)
    body = maintain_bodies(ws)[0]
    assert len(maintainer) == 1 and "Wikiskill-Attempts: 1" in body and "Wikiskill-Refused: 0" in body
    assert (
        "- derived for reversal-slips: summary from the Description's first sentence (The agent reverses words "
        f"wrongly.); evidence from the shown task ids the page cites ({shown})"
    ) in body
    page = parse_page("reversal-slips", (ws / "wiki/patterns/reversal-slips.md").read_text())
    assert page.meta.summary == "The agent reverses words wrongly." and page.meta.tasks() == [shown]
    assert (
        "(patterns/reversal-slips.md): "
        "The agent reverses words wrongly. (1 episode(s)" in (ws / "wiki/index.md").read_text()
    )


PASTED_FUNCTION = (
    "```python\ndef reverse(word: str) -> str:\n    letters = list(word)\n    letters.reverse()\n"
    "    return ''.join(letters)\n```"
)


class PastingWorld(ScriptedWorld):
    """The maintainer's first log section is a function pasted from a trace; told so, it writes
    a sentence about the round."""

    def __call__(self, body):
        messages = body["messages"]
        if not messages[0]["content"].startswith("You are a Wiki Maintainer Agent"):
            return super().__call__(body)
        retried = messages[-1]["role"] == "user" and "not prose about the round" in messages[-1]["content"]
        log = "Reversal tasks failed because words were read whole." if retried else PASTED_FUNCTION
        return json.dumps({**MAINTAINER_REPLY, "append_log": log}).replace(
            "SHOWN-TASK", re.search(r"^# Trace (\S+)", messages[1]["content"], re.MULTILINE).group(1)
        )


def test_a_log_section_that_is_code_is_refused_and_the_retried_prose_is_written(tmp_path):
    world = PastingWorld()
    with FakeOpenAIServer(world) as server:
        evolve_through_cli(CliRunner(), tmp_path / "ws", server.base_url, rounds=1)
        requests = server.requests
    ws = tmp_path / "ws"
    log = (ws / "wiki/log.md").read_text()
    assert "## Round 1\n\nReversal tasks failed because words were read whole." in log
    assert "def reverse" not in log and (ws / "wiki/patterns/reversal-slips.md").exists()
    body = maintain_bodies(ws)[0]
    assert "Wikiskill-Attempts: 2" in body and "- retried after: append_log: the log section is code" in body
    maintainer = [r for r in requests if r["messages"][0]["content"].startswith("You are a Wiki Maintainer Agent")]
    assert len(maintainer) == 2 and "not prose about the round" in maintainer[1]["messages"][-1]["content"]
