"""File edits written in a reply's text (`agent.edit_format`), applied by the workdir agent in its
working directory on the scripted local server: a fenced block holding the task's file fixes it
and the suite's check passes; a block for a path outside the working directory, a file the task
did not give or a link is refused with a message to the model; `auto` prefers a real tool call."""

import asyncio
from pathlib import Path

import pytest

from taskfolders import BUGGY, FIXED
from wikiskill import api
from wikiskill.benchmarks import Task
from wikiskill.environments.host import HostFolder
from wikiskill.environments.output import ShellResult
from wikiskill.knowledge.settings import SkillsSettings
from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.llm.settings import LLMSettings
from wikiskill.roles.edit_blocks import SearchReplace, WholeFile
from wikiskill.roles.file_edits import MAX_FILE_BYTES, FileEditor
from wikiskill.roles.settings import EditFormat, RoleSettings
from wikiskill.roles.shell_agent import ShellAgent
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

TASK = Task(id="fix-calc", split="train", question="Fix absolute() in calc.py.")


def agent(server: FakeOpenAIServer, edit_format: EditFormat = EditFormat.AUTO, max_steps: int = 6) -> ShellAgent:
    model = LiteLLMModel(
        RoleSettings(model="openai/fake-model", api_base=server.base_url),
        LLMSettings(retries=0, timeout=20),
        "agent",
        Meter(),
    )
    return ShellAgent(model, [], SkillsSettings(), max_steps, edit_format=edit_format)


def replies(*steps: str | Reply):
    """Answers the n-th request with the n-th step, then says it is done."""

    def script(body: dict) -> str | Reply:
        step = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return steps[step] if step < len(steps) else "Done."

    return script


def calc_workdir(tmp_path: Path) -> Path:
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "calc.py").write_text(BUGGY)
    return workdir


def told(server: FakeOpenAIServer) -> list[str]:
    """What the agent answered the model in user messages after its first prompt."""
    return [m["content"] for m in server.requests[-1]["messages"][2:] if m["role"] == "user"]


def test_a_reply_holding_one_fenced_block_for_the_tasks_file_edits_it_and_the_check_passes(tmp_path, monkeypatch):
    from test_shell_agent import workdir_suite_workspace

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    script = replies(f"Here is the corrected function:\n```python\n{FIXED}```", "absolute() now negates negatives.")
    with FakeOpenAIServer(script) as server:
        ws = workdir_suite_workspace(tmp_path, server.base_url)
        result = api.evaluate(ws, "val")
        requests = server.requests
    runs = result.runs[0]
    assert [t.score for t in runs] == [1.0, 1.0] and len(requests) == 2 * 2
    assert all(t.prediction == "absolute() now negates negatives." for t in runs)
    edit = runs[0].edits[0]
    assert edit.path == "calc.py" and "-    return x\n" in edit.diff
    assert "+    return x if x >= 0 else -x\n" in edit.diff
    shown = [body["messages"][-1] for body in requests if len(body["messages"]) > 2]
    assert [m["role"] for m in shown] == ["user", "user"]
    assert all(m["content"].startswith("Edited calc.py:\n--- a/calc.py") for m in shown)


@pytest.mark.parametrize(
    ("named", "why"),
    [
        ("../outside.py", "outside the working directory"),
        ("/tmp/outside.py", "outside the working directory"),
        ("setup.py", "not a file of this task"),
        ("linked.py", "link"),
    ],
)
def test_a_block_for_a_path_outside_the_workdir_or_a_file_the_task_did_not_give_is_refused(tmp_path, named, why):
    workdir = calc_workdir(tmp_path)
    (tmp_path / "target.py").write_text("untouched\n")
    (workdir / "linked.py").symlink_to(tmp_path / "target.py")
    script = replies(f"{named}\n```python\nprint('overwritten')\n```")
    with FakeOpenAIServer(script) as server:
        trajectory = asyncio.run(agent(server).play(TASK, workdir))
    answer = told(server)[0]
    assert answer.startswith(f"Edit of {named} refused") and why in answer and "No file was changed" in answer
    assert (tmp_path / "target.py").read_text() == "untouched\n" and (workdir / "calc.py").read_text() == BUGGY
    assert not (tmp_path / "outside.py").exists() and not (workdir / "setup.py").exists()
    assert trajectory.edits == []


def test_a_new_file_is_written_only_where_the_task_names_it(tmp_path):
    workdir = calc_workdir(tmp_path)
    task = Task(id="notes", split="train", question="Write NOTES.md saying what calc.py does.")
    script = replies("NOTES.md\n```markdown\ncalc.py holds absolute().\n```")
    with FakeOpenAIServer(script) as server:
        trajectory = asyncio.run(agent(server).play(task, workdir))
    assert (workdir / "NOTES.md").read_text() == "calc.py holds absolute().\n"
    assert told(server)[0].startswith("Created NOTES.md:\n--- /dev/null")
    assert [edit.path for edit in trajectory.edits] == ["NOTES.md"]


def test_auto_prefers_a_real_tool_call_when_both_appear(tmp_path):
    workdir = calc_workdir(tmp_path)
    both = Reply(
        content=f"calc.py\n```python\n{FIXED}```",
        tool_calls=[{"name": "bash", "arguments": {"command": "echo read > seen.txt"}}],
    )
    with FakeOpenAIServer(replies(both)) as server:
        trajectory = asyncio.run(agent(server).play(TASK, workdir))
    assert (workdir / "seen.txt").read_text() == "read\n" and (workdir / "calc.py").read_text() == BUGGY
    assert trajectory.edits == []
    assert [m["role"] for m in server.requests[1]["messages"][2:]] == ["assistant", "tool"]


def test_under_the_tools_format_a_fenced_block_changes_no_file(tmp_path):
    workdir = calc_workdir(tmp_path)
    with FakeOpenAIServer(replies(f"calc.py\n```python\n{FIXED}```")) as server:
        trajectory = asyncio.run(agent(server, EditFormat.TOOLS).play(TASK, workdir))
    assert (workdir / "calc.py").read_text() == BUGGY and trajectory.edits == []
    assert "called no tool" in told(server)[0]


def test_the_diff_format_applies_a_search_replace_block_and_shows_a_missed_search(tmp_path):
    workdir = calc_workdir(tmp_path)
    edit = "calc.py\n<<<<<<< SEARCH\n    return x\n=======\n    return x if x >= 0 else -x\n>>>>>>> REPLACE\n"
    missed = "calc.py\n<<<<<<< SEARCH\n    return y\n=======\n    return 0\n>>>>>>> REPLACE\n"
    with FakeOpenAIServer(replies(missed, edit)) as server:
        trajectory = asyncio.run(agent(server, EditFormat.DIFF).play(TASK, workdir))
    assert (workdir / "calc.py").read_text() == FIXED
    first, second = told(server)[:2]
    assert "the SEARCH section is not in the file" in first and second.startswith("Edited calc.py:")
    assert len(trajectory.edits) == 1


def test_a_reply_that_writes_the_same_file_again_after_a_change_ends_the_task(tmp_path):
    workdir = calc_workdir(tmp_path)
    block = f"calc.py\n```python\n{FIXED}```"
    with FakeOpenAIServer(replies(block, block, block, block)) as server:
        trajectory = asyncio.run(agent(server).play(TASK, workdir))
    assert len(server.requests) == 2 and trajectory.failure is None and trajectory.error is None
    assert trajectory.prediction == block and (workdir / "calc.py").read_text() == FIXED


def test_a_file_named_only_inside_a_longer_name_is_not_writable(tmp_path):
    workdir = calc_workdir(tmp_path)
    with FakeOpenAIServer(replies("c.py\n```python\nprint('new')\n```")) as server:
        trajectory = asyncio.run(agent(server).play(TASK, workdir))  # the task names calc.py, not c.py
    assert told(server)[0].startswith("Edit of c.py refused: 'c.py' is not a file of this task")
    assert not (workdir / "c.py").exists() and trajectory.edits == []


def test_a_file_under_a_folder_that_links_out_of_the_workdir_is_refused(tmp_path):
    workdir = calc_workdir(tmp_path)
    (tmp_path / "outside").mkdir()
    (workdir / "dir").symlink_to(tmp_path / "outside")
    task = Task(id="x", split="train", question="Write dir/x.py holding absolute().")
    with FakeOpenAIServer(replies("dir/x.py\n```python\nprint('escaped')\n```")) as server:
        trajectory = asyncio.run(agent(server).play(task, workdir))
    assert told(server)[0].startswith("Edit of dir/x.py refused: dir/x.py is or lies under a link")
    assert list((tmp_path / "outside").iterdir()) == [] and trajectory.edits == []


def test_a_search_found_twice_changes_no_file_and_tells_the_model_to_widen_it(tmp_path):
    workdir = calc_workdir(tmp_path)
    (workdir / "calc.py").write_text(BUGGY + "\n\n" + BUGGY.replace("absolute", "magnitude"))
    before = (workdir / "calc.py").read_text()
    twice = "calc.py\n<<<<<<< SEARCH\n    return x\n=======\n    return x if x >= 0 else -x\n>>>>>>> REPLACE\n"
    with FakeOpenAIServer(replies(twice)) as server:
        trajectory = asyncio.run(agent(server, EditFormat.DIFF).play(TASK, workdir))
    assert "the SEARCH section is in the file more than once" in told(server)[0]
    assert (workdir / "calc.py").read_text() == before and trajectory.edits == []


def edited(workdir: Path, given: list[str], question: str, edit: WholeFile | SearchReplace, environment=None) -> str:
    """What the editor of a task whose working directory is `workdir` tells the model of `edit`."""
    editor = FileEditor(environment or HostFolder(workdir, sandbox=False), given, question)
    return asyncio.run(editor.apply(edit)).message


def test_an_unnamed_block_edits_the_task_s_one_file_and_among_several_is_refused_listing_twenty(tmp_path):
    workdir = calc_workdir(tmp_path)
    assert edited(workdir, ["calc.py"], "Fix absolute().", WholeFile(None, FIXED)).startswith("Edited calc.py:")
    assert (workdir / "calc.py").read_text() == FIXED
    files = [f"f{index:02d}.py" for index in range(21)]
    said = edited(workdir, files, "Fix absolute().", WholeFile(None, "x = 1\n"))
    listed = ", ".join(files[:20])
    assert said == (
        "Edit of the unnamed block refused: the block names no file: write the file's path on the line before"
        f" the fence (the files: {listed}). No file was changed."
    )
    assert edited(workdir, [], "Fix absolute().", WholeFile(None, "x = 1\n")).endswith(
        "(the files: none). No file was changed."
    )


def test_a_file_the_task_neither_gave_nor_named_is_refused_listing_twenty_of_its_files(tmp_path):
    workdir = calc_workdir(tmp_path)
    files = [f"f{index:02d}.py" for index in range(21)]
    said = edited(workdir, files, "Fix absolute().", WholeFile("other.py", "x = 1\n"))
    assert said == (
        f"Edit of other.py refused: 'other.py' is not a file of this task: edit one of {', '.join(files[:20])}"
        " (a new file only where the task asks for it). No file was changed."
    )
    said = edited(workdir, [], "Fix absolute().", WholeFile("other.py", "x = 1\n"))
    assert "edit one of no files (a new file" in said and not (workdir / "other.py").exists()


def test_a_created_and_an_edited_file_are_shown_as_unified_diffs(tmp_path):
    workdir = calc_workdir(tmp_path)
    question = "Fix absolute() in calc.py and explain it in notes/WHY.md."
    said = edited(workdir, ["calc.py"], question, WholeFile("notes/WHY.md", "x may be negative\n"))
    assert said == "Created notes/WHY.md:\n--- /dev/null\n+++ b/notes/WHY.md\n@@ -0,0 +1 @@\n+x may be negative"
    assert (workdir / "notes/WHY.md").read_text() == "x may be negative\n"
    said = edited(workdir, ["calc.py"], question, SearchReplace("calc.py", "    return x\n", "    return abs(x)\n"))
    assert said == (
        "Edited calc.py:\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def absolute(x):\n"
        "-    return x\n+    return abs(x)"
    )


def test_an_empty_search_fills_a_new_file_and_an_edit_that_keeps_an_empty_file_empty_changes_nothing(tmp_path):
    workdir = calc_workdir(tmp_path)
    (workdir / "empty.py").write_text("")
    question = "Fill new.py."
    said = edited(workdir, ["calc.py", "empty.py"], question, SearchReplace("new.py", "", "x = 1\n"))
    assert said.startswith("Created new.py:") and (workdir / "new.py").read_text() == "x = 1\n"
    said = edited(workdir, ["calc.py", "empty.py"], question, WholeFile("empty.py", ""))
    assert said == "empty.py is unchanged: the edit gives the text it already has."


def test_a_file_of_the_size_limit_is_written_one_byte_more_is_refused_and_a_larger_given_file_is_not_read(tmp_path):
    workdir = calc_workdir(tmp_path)
    (workdir / "big.txt").write_text("y" * (MAX_FILE_BYTES + 1))
    given = ["big.txt", "calc.py"]
    said = edited(workdir, given, "Fix calc.py.", WholeFile("calc.py", "x" * (MAX_FILE_BYTES - 1) + "\n"))
    assert said.startswith("Edited calc.py:") and (workdir / "calc.py").stat().st_size == MAX_FILE_BYTES
    said = edited(workdir, given, "Fix calc.py.", WholeFile("calc.py", "x" * MAX_FILE_BYTES + "\n"))
    assert said == (
        f"Edit of calc.py refused: the new calc.py is over {MAX_FILE_BYTES} bytes: write it with a command."
        " No file was changed."
    )
    said = edited(workdir, given, "Fix calc.py.", WholeFile("big.txt", "small\n"))
    refused = f"Edit of big.txt refused: big.txt is over {MAX_FILE_BYTES} bytes: change it with a command."
    assert said == f"{refused} No file was changed."
    assert (workdir / "big.txt").stat().st_size == MAX_FILE_BYTES + 1


def test_a_given_file_that_is_not_utf8_text_is_refused(tmp_path):
    workdir = calc_workdir(tmp_path)
    (workdir / "data.bin").write_bytes(b"\xff\xfe\x00binary")
    said = edited(workdir, ["calc.py", "data.bin"], "Fix calc.py.", WholeFile("data.bin", "text\n"))
    assert said == (
        "Edit of data.bin refused: data.bin is not a UTF-8 text file: change it with a command. No file was changed."
    )
    assert (workdir / "data.bin").read_bytes() == b"\xff\xfe\x00binary"


def test_a_link_inside_a_real_folder_is_refused(tmp_path):
    workdir = calc_workdir(tmp_path)
    (tmp_path / "target.py").write_text("untouched\n")
    (workdir / "src").mkdir()
    (workdir / "src/linked.py").symlink_to(tmp_path / "target.py")
    said = edited(workdir, ["calc.py", "src/linked.py"], "Fix calc.py.", WholeFile("src/linked.py", "x = 1\n"))
    assert said.startswith("Edit of src/linked.py refused: src/linked.py is or lies under a link")
    assert (tmp_path / "target.py").read_text() == "untouched\n"


def test_a_write_the_shell_fails_shows_the_first_200_characters_of_what_it_said(tmp_path):
    workdir = calc_workdir(tmp_path)
    folder = "f" * 190
    (workdir / folder).write_text("a file where the edit wants a folder\n")
    question = f"Write {folder}/x.py."
    said = edited(workdir, ["calc.py", folder], question, WholeFile(f"{folder}/x.py", "x = 1\n"))
    start = f"Edit of {folder}/x.py refused: {folder}/x.py could not be written ("
    assert said.startswith(start) and said.endswith("). No file was changed.")
    shown = said.removeprefix(start).removesuffix("). No file was changed.")
    assert len(shown) == 200 and shown.startswith("mkdir: cannot create directory")


class FailingShell:
    """An environment whose every command fails with exit code 7 and prints nothing."""

    async def run(self, command: str, timeout_s: float, output_chars: int) -> ShellResult:
        return ShellResult(7, "")


def test_a_command_that_fails_saying_nothing_is_shown_by_its_exit_code(tmp_path):
    said = edited(tmp_path, ["calc.py"], "Fix calc.py.", WholeFile("calc.py", FIXED), FailingShell())
    assert said == "Edit of calc.py refused: calc.py could not be written (7). No file was changed."
