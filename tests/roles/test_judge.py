"""The judge grades a workdir task's answer and changed files: one verdict per expectation (the
share passed is the score) or a rubric score, a reply that does not parse retried once with the
reason, several samples averaged, and the files shown as a diff against the task's own."""

import json
from pathlib import Path

import pytest

from chatmodels import served_model
from wikiskill.benchmarks import Task
from wikiskill.roles.judge import Judge, changed_files
from wikiskill.store.traces import Trajectory
from wikiskill.testing.fakeserver import FakeOpenAIServer

EXPECTATIONS = ["add returns the sum", "the README says what changed"]


def folders(tmp_path: Path) -> tuple[Path, Path]:
    original, work = tmp_path / "task", tmp_path / "work"
    for folder, body in ((original, "return a - b"), (work, "return a + b")):
        folder.mkdir()
        (folder / "solution.py").write_text(f"def add(a, b):\n    {body}\n")
    (original / "README.md").write_text("Fix add.\n")
    (work / "NOTES.md").write_text("Changed - to +.\n")
    (work / "__pycache__").mkdir()
    (work / "__pycache__" / "solution.pyc").write_bytes(b"\x00compiled")
    return original, work


def judged(tmp_path: Path, replies: list[str], samples: int = 1, rubric: bool = False):
    original, work = folders(tmp_path)
    metadata = {"rubric": "Is add fixed?"} if rubric else {"expectations": EXPECTATIONS}
    task = Task("t1", "val", "Fix add in solution.py.", metadata=metadata, files=original)
    trajectory = Trajectory(task_id="t1", split="val", kind="workdir", question=task.question, prediction="fixed it")
    answers = iter(replies)
    with FakeOpenAIServer(lambda body: next(answers)) as server:
        score = Judge(served_model(server, "judge"), samples=samples).score(task, trajectory, work)
    return score, server.requests


def verdicts(*passed: bool, feedback: str = "") -> str:
    expectations = [{"passed": each, "evidence": f"evidence {index}"} for index, each in enumerate(passed)]
    return json.dumps({"expectations": expectations, "feedback": feedback})


def test_the_score_is_the_share_of_expectations_passed_and_the_failed_ones_are_the_feedback(tmp_path):
    score, _ = judged(tmp_path, [verdicts(True, False, feedback="The README was not touched.")])
    assert score.value == 0.5
    assert [(e.expectation, e.passed, e.evidence) for e in score.expectations] == [
        (EXPECTATIONS[0], True, "evidence 0"),
        (EXPECTATIONS[1], False, "evidence 1"),
    ]
    assert score.feedback == f"FAILED expectation: {EXPECTATIONS[1]} (evidence 1)\nThe README was not touched."


def test_the_judge_is_shown_the_answer_and_the_changed_files_as_a_diff(tmp_path):
    _, requests = judged(tmp_path, [verdicts(True, True)])
    shown = requests[0]["messages"][-1]["content"]
    assert "fixed it" in shown and EXPECTATIONS[1] in shown
    assert "-    return a - b\n+    return a + b" in shown
    assert "--- README.md (deleted)" in shown and "+++ b/NOTES.md" in shown and "solution.pyc" not in shown


def test_a_reply_that_does_not_parse_is_retried_once_with_the_reason(tmp_path):
    score, requests = judged(tmp_path, [verdicts(True), verdicts(True, True)])
    assert score.value == 1.0 and len(requests) == 2
    assert "give exactly 2 expectation verdicts" in requests[1]["messages"][-1]["content"]


def test_a_second_reply_that_does_not_parse_fails_the_judge(tmp_path):
    with pytest.raises(ValueError, match="the judge's reply cannot be used: no JSON object found"):
        judged(tmp_path, ["I think it passes.", "Still no JSON."])


def test_rubric_samples_are_averaged_and_the_feedback_is_the_sample_nearest_the_mean(tmp_path):
    replies = [json.dumps({"score": value, "feedback": f"sample {value}"}) for value in (0.2, 0.9, 0.7)]
    score, requests = judged(tmp_path, replies, samples=3, rubric=True)
    assert score.value == pytest.approx(0.6) and score.feedback == "sample 0.7"
    assert len(requests) == 3 and score.expectations == []


def test_a_binary_file_changed_is_named_and_a_new_file_is_shown_whole(tmp_path):
    original, work = folders(tmp_path)
    (original / "image.png").write_bytes(b"\x89PNG\xff\x00")
    (work / "image.png").write_bytes(b"\x89PNG\xff\x01")
    diff = changed_files(original, work)
    assert "--- image.png (binary, changed)" in diff
    assert "--- /dev/null\n+++ b/NOTES.md\n@@ -0,0 +1 @@\n+Changed - to +.\n" in diff
    assert changed_files(None, work).count("--- /dev/null") == 2
