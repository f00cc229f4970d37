"""`wikiskill show ROUND --task ID` prints one task's trajectory as the agent lived it, and the
report links each task row to a page that shows the same."""

import html
import re

import pytest
from typer.testing import CliRunner

from scripted import SPELL
from wikiskill import api
from wikiskill.cli import app
from wikiskill.store.workspace import Workspace


@pytest.fixture(scope="module")
def evolved(evolved_workspace):
    """Round 1 accepts spell-letters; round 2's agent carries it."""
    return Workspace(evolved_workspace.root)


def show(ws, *args: str):
    return CliRunner().invoke(app, ["-C", str(ws.root), "show", *args])


def test_show_task_prints_the_prompt_with_its_skills_each_message_the_answer_and_the_score(evolved):
    result = show(evolved, "2", "--task", "train-01")
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.startswith("round 2, task train-01: score ")
    assert "skills in its prompt: spell-letters" in out and SPELL in out  # the skill's text, in the system prompt
    assert "question: Write the word" in out or "question: How many times" in out
    assert out.index("--- system") < out.index("--- user") < out.index("--- assistant") < out.index("--- answer: ")
    assert "expected: " in out


def test_show_task_of_a_val_task_gives_its_answer_and_an_unknown_task_is_one_line(evolved):
    val = show(evolved, "1", "--task", "val-01")
    assert val.exit_code == 0 and "answer: " in val.output and "expected: " in val.output
    unknown = show(evolved, "1", "--task", "nope")
    assert unknown.exit_code == 1 and "round 1 ran no task 'nope'" in unknown.stderr


def test_the_report_links_each_task_row_to_a_page_showing_it_as_show_does(evolved, tmp_path):
    out = api.report(evolved, tmp_path / "report.html")
    table = out.read_text(encoding="utf-8").split('<table id="tasks">')[1].split("</table>")[0]
    links = re.findall(r'<a href="([^"]+)">(val-\d+)</a>', table)
    assert len(links) == 6
    for href, task in links:
        page = html.unescape((tmp_path / href).read_text(encoding="utf-8"))
        assert show(evolved, "2", "--task", task).output.strip() in page
