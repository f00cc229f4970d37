"""The progress file a running `evolve` keeps in .wikiskill/ for `report --serve`: the step running
now with its tasks done, score and cost so far, and the run's spend, rewritten whole each time."""

import pytest

from inprocess import DiesAfter, WorldModel, scripted_workspace
from scripted import ScriptedWorld
from wikiskill.loop.evolve import run_rounds
from wikiskill.loop.harness import Harness, QuietReporter
from wikiskill.loop.progress_file import PROGRESS_FILE, ProgressRecorder, read_progress
from wikiskill.store.traces import Trajectory, Usage


def played(score: float, cost: float) -> Trajectory:
    return Trajectory(task_id="t", split="val", kind="qa", question="q", score=score, usage=Usage(cost_usd=cost))


def test_the_progress_file_follows_a_task_bar_and_the_runs_spend(tmp_path):
    spend = Usage(prompt_tokens=100, completion_tokens=20, cost_usd=0.5)
    recorder = ProgressRecorder(tmp_path, QuietReporter(), lambda: spend)
    recorder.info("r002 rollout: starting")
    with recorder.tasks("r002 validate: val", total=3) as done:
        assert read_progress(tmp_path).bar.model_dump() == {
            "description": "r002 validate: val",
            "done": 0,
            "total": 3,
            "score": None,
            "cost_usd": 0.0,
        }
        done(played(1.0, 0.25))
        spend = Usage(prompt_tokens=300, completion_tokens=50, cost_usd=0.75)
        done(played(0.0, 0.25))
        progress = read_progress(tmp_path)
        assert (progress.bar.done, progress.bar.score, progress.bar.cost_usd) == (2, 0.5, 0.5)
        assert (progress.cost_usd, progress.tokens, progress.message) == (0.75, 350, "r002 rollout: starting")
    progress = read_progress(tmp_path)
    assert progress.bar is None and not progress.finished
    recorder.finish()
    assert read_progress(tmp_path).finished
    assert [path.name for path in tmp_path.iterdir()] == [PROGRESS_FILE]  # no temporary file left behind


def test_an_evolve_that_is_cut_off_leaves_its_progress_marked_finished_at_the_step_it_reached(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    model = WorldModel(ScriptedWorld())
    harness = Harness(ws, reporter=DiesAfter("running 1 round"), model_factory=lambda role: model)
    with harness, pytest.raises(SystemExit):
        run_rounds(harness, 1)
    progress = read_progress(ws.state_dir)
    assert progress.finished and progress.message == "running 1 round(s): r001"
    assert isinstance(harness.reading.reporter, DiesAfter)  # the harness has its own reporter back


def test_a_missing_or_foreign_progress_file_reads_as_none(tmp_path):
    assert read_progress(tmp_path) is None
    (tmp_path / PROGRESS_FILE).write_text('{"pid": "not a number"}')
    assert read_progress(tmp_path) is None
