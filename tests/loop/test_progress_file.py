"""The progress file a running `evolve` keeps in .wikiskill/ for `report --serve`: the step running
now with its tasks done, score and cost so far, the turns and tokens of a learning role at work,
and the run's spend, rewritten whole each time."""

import io

import pytest
from rich.console import Console

from inprocess import DiesAfter, WorldModel, scripted_workspace
from scripted import ScriptedWorld
from wikiskill.loop.evolve import run_rounds
from wikiskill.loop.harness import Harness, QuietReporter
from wikiskill.loop.progress import RichReporter
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
    harness = Harness.open(ws, reporter=DiesAfter("running 1 round"), model_factory=lambda role: model)
    with harness, pytest.raises(SystemExit):
        run_rounds(harness, 1)
    progress = read_progress(ws.state_dir)
    assert progress.finished and progress.message == "running 1 round(s): r001"
    assert isinstance(harness.reading.reporter, DiesAfter)  # the harness has its own reporter back


def test_a_missing_or_foreign_progress_file_reads_as_none(tmp_path):
    assert read_progress(tmp_path) is None
    (tmp_path / PROGRESS_FILE).write_text('{"pid": "not a number"}')
    assert read_progress(tmp_path) is None


class Watching(QuietReporter):
    """Reads the progress file each time a learning role reports a turn."""

    def __init__(self, state_dir):
        self.state_dir, self.seen = state_dir, []

    def turn(self, description, turn, usage):
        progress = read_progress(self.state_dir)
        self.seen.append((progress.role.description, progress.role.turn, progress.role.tokens, progress.message))


def test_the_maintainers_and_the_proposers_turns_and_tokens_show_as_they_go(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    watching = Watching(ws.state_dir)
    model = WorldModel(ScriptedWorld())  # 15 tokens a reply
    with Harness.open(ws, reporter=watching, model_factory=lambda role: model) as harness:
        run_rounds(harness, 1)
    assert watching.seen[0] == ("r001 maintain", 1, 15, "r001 maintain: turn 1 done, 15 tokens so far")
    proposer = [seen for seen in watching.seen if seen[0] == "r001 propose"]
    assert [(turn, tokens) for _, turn, tokens, _ in proposer] == [(n, 15 * n) for n in range(1, 6)]
    assert proposer[-1][3] == "r001 propose: turn 5 done, 75 tokens so far"
    assert read_progress(ws.state_dir).role is None  # the next line said clears it


def test_the_terminal_shows_each_turn_of_a_learning_role():
    console = Console(file=io.StringIO(), width=200)
    RichReporter(console).turn("r002 propose", 3, Usage(prompt_tokens=4000, completion_tokens=512))
    assert console.file.getvalue().strip() == "r002 propose: turn 3 done, 4,512 tokens so far"
