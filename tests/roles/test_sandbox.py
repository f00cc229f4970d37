"""What roles may read, at a git ref: wiki/ and skills/ files, train traces (and ingested
sessions) by task id with the latest round's winning, lists of each, and nothing else."""

import pytest

from wikiskill.roles.sandbox import Sandbox
from wikiskill.store.traces import Trajectory
from wikiskill.store.workspace import MAIN, format_message
from workspaces import new_workspace


def trace(task_id: str, split: str, answer: str) -> str:
    return Trajectory(task_id=task_id, split=split, kind="qa", question=f"Q {task_id}", prediction=answer).to_json()


@pytest.fixture
def sandbox(tmp_path):
    ws = new_workspace(tmp_path)
    changes = {
        "raw/r001/train/t1.json": trace("t1", "train", "first try"),
        "raw/r002/train/t1.json": trace("t1", "train", "second try"),
        "raw/r001/train/t2.json": trace("t2", "train", "x" * 500),
        "raw/r001/ingested/s1.json": trace("s1", "session", "from a real session"),
        "raw/r001/train/leak.json": trace("leak", "val", "VAL-ANSWER"),
        "raw/r001/train/broken.json": "{not json",
        "wiki/patterns/unit-slips.md": "# Unit slips\n",
        "wiki/patterns/long.md": "y" * 400,
        "skills/spell/SKILL.md": "---\nname: spell\n---\n",
        "notes/private.md": "not for roles\n",
    }
    ws.commit(changes, format_message("r2 rollout", {"Round": 2, "Step": "rollout"}))
    return Sandbox(ws, MAIN, max_chars=300)


def test_a_trace_is_read_by_task_id_or_stored_path_and_the_latest_round_wins(sandbox):
    text, is_trace = sandbox.read("traces/t1")
    assert is_trace and "second try" in text and "first try" not in text
    assert sandbox.read("raw/r001/train/t1.json")[0] == text
    assert "from a real session" in sandbox.read("traces/s1.json")[0]


def test_wiki_and_skills_files_are_read_whole_up_to_the_limit_and_traces_are_cut(sandbox):
    assert sandbox.read("./wiki//patterns/unit-slips.md") == ("# Unit slips\n", False)
    assert sandbox.read("skills\\spell\\SKILL.md") == ("---\nname: spell\n---\n", False)
    assert sandbox.read("wiki/patterns/long.md") == ("y" * 300, False)
    assert len(sandbox.read("traces/t2")[0]) <= 300


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("traces/leak", "validation and test material is not readable"),
        ("traces/broken", "the trace of task 'broken' is unreadable"),
        ("traces/t9", "no train trace for task 't9'"),
        ("notes/private.md", "'notes/private.md' is not readable"),
        ("wiki/patterns/missing.md", "no file 'wiki/patterns/missing.md'"),
        ("C:/Windows/win.ini", "absolute paths are not allowed"),
        ("wiki/\x00.md", "control characters"),
    ],
)
def test_anything_else_is_refused_with_the_reason(sandbox, path, reason):
    with pytest.raises(LookupError, match=reason.replace("(", r"\(")):
        sandbox.read(path)


def test_listing_shows_the_readable_folders_the_traces_by_id_and_a_folder_s_files(sandbox):
    assert sandbox.list("") == sandbox.list(".") == ["wiki/", "skills/", "traces/"]
    assert sandbox.list("traces/") == ["traces/broken", "traces/leak", "traces/s1", "traces/t1", "traces/t2"]
    assert "wiki/patterns/unit-slips.md" in sandbox.list("wiki")
    assert "skills/spell/SKILL.md" in sandbox.list("skills")
    with pytest.raises(LookupError, match="'raw' is not listable"):
        sandbox.list("raw")
