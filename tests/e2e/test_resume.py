"""`kill -9` of a real `wikiskill evolve` at chosen points, then `evolve` for the rounds still
missing: it finishes them with the history of an uninterrupted run, recomputes no finished task,
and leaves git consistent (see benchmarks/kill_resume.py, which also sweeps random points). After
an interrupt, `--rounds N` means N more rounds from now, the cut-off round the first of them."""

import os
import random
import signal
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from inprocess import DiesAfter, WorldModel, evolve_scripted, scripted_workspace
from scripted import ScriptedWorld
from wikiskill.cli import app
from wikiskill.loop.evolve import evolve
from wikiskill.loop.harness import Harness
from wikiskill.store.rounds import round_state
from wikiskill.store.workspace import Workspace
from wikiskill.testing.fakeserver import FakeOpenAIServer
from workspaces import until

pytestmark = pytest.mark.slow


sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import kill_resume  # noqa: E402  (by this name, as the fork server and the other kill tests import it)

POINTS = {  # kills, one per run (k counts events of that run; see kill_resume.Watcher)
    "mid-rollout, with finished tasks cached": ["result:9"],
    "mid-commit, before a ref moves": ["import:4"],
    "around the merge's ref move, before the tree is synced": ["marker:4"],
    "after the rejected tag, before its gate commit": ["ref:16"],
    "after the validation commit, then mid-commit of the next rollout": ["ref:7", "import:2"],
    "after the last round's tag": ["ref:19"],
}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    start = kill_resume.ForkServer()
    with FakeOpenAIServer(ScriptedWorld(), latency=0.02) as server:
        yield server, kill_resume.reference_run(server, tmp_path_factory.mktemp("reference") / "ws", start), start


@pytest.mark.parametrize("point", POINTS)
def test_evolve_resumes_cleanly_after_kill_9(reference, tmp_path, point):
    server, expected, start = reference
    outcome = kill_resume.kill_and_resume(server, tmp_path / "ws", expected, POINTS[point], start)
    assert outcome.problems == []
    kills = len(POINTS[point])
    assert all(run.startswith("killed") for run in outcome.runs[:kills]), outcome.runs  # every kill landed


def test_five_kills_at_random_moments_leave_no_candidate_branch_once_evolve_finishes(reference, tmp_path):
    """Five `kill -9`, each of the next run, at moments drawn from a seeded RNG (any event kind, at
    most the reference's count of it: mid-validation, at a gate, between steps)."""
    server, expected, start = reference
    rng = random.Random(36)
    triggers = [kill_resume.draw_trigger(rng, expected) for _ in range(5)]
    outcome = kill_resume.kill_and_resume(server, tmp_path / "ws", expected, triggers, start)
    assert outcome.problems == [], outcome.runs
    assert kill_resume.git(tmp_path / "ws", "for-each-ref", "refs/heads/skill/") == ""


def interrupted(ws, rounds: int, line: str) -> None:
    model = WorldModel(ScriptedWorld())
    with pytest.raises(SystemExit):
        evolve(Harness.open(ws, reporter=DiesAfter(line), model_factory=lambda role: model), rounds)


def test_rounds_mean_that_many_more_rounds_from_now_after_an_interrupted_run(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    interrupted(ws, 3, "complete (1 of 3)")
    result = evolve_scripted(ws, rounds=3)
    assert (result.rounds_completed, len(result.decisions)) == (4, 3)  # rounds 2 to 4, not 2 and 3


def test_a_run_killed_after_reporting_its_last_round_leaves_the_next_run_its_full_rounds(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    interrupted(ws, 2, "complete (2 of 2)")
    result = evolve_scripted(ws, rounds=1)
    assert (result.rounds_completed, len(result.decisions)) == (3, 1)


def round_3_started(ws: Path) -> bool:
    return round_state(Workspace(ws), 3).started


def one_line(text: str) -> str:
    """Output as one line: rich wraps long lines at the width it assumes for a pipe."""
    return " ".join(text.split())


def test_ctrl_c_mid_round_then_evolve_with_another_n_resumes_that_round_as_the_first_of_n(reference, tmp_path):
    start = reference[2]
    with FakeOpenAIServer(ScriptedWorld(), latency=0.02) as server:
        ws = kill_resume.new_workspace(tmp_path / "ws", server.base_url)
        run = start(ws, tmp_path / "interrupted", "--rounds", "7")
        try:
            until(lambda: run.poll() is not None or round_3_started(ws), timeout=240)
            assert run.poll() is None, (tmp_path / "interrupted.err").read_text()
            os.killpg(run.pid, signal.SIGINT)  # Ctrl-C: the whole foreground group
            until(lambda: run.poll() is not None, timeout=60)
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
        assert run.wait() != 0 and kill_resume.completed_rounds(ws) == 2
        resumed = kill_resume.run_evolve(ws, start=start, extra=("--rounds", "2"))
    assert resumed.exit_code == 0, resumed.stderr
    said = one_line(resumed.stdout)
    assert "resuming round 3 (interrupted); it counts as the first of these 2 round(s): r003 to r004" in said
    assert said.index("resuming round 3") < said.index("r003 complete (1 of 2)") < said.index("r004 complete (2 of 2)")
    assert "Done: 2 of 2 round(s) run; 4 completed in all" in said
    assert kill_resume.completed_rounds(ws) == 4


def test_evolve_with_nothing_left_to_do_says_so_and_why(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from kill_gate import PerfectWorld

    with FakeOpenAIServer(PerfectWorld()) as server:
        ws = kill_resume.new_workspace(tmp_path / "ws", server.base_url)
        first = CliRunner().invoke(app, ["-C", str(ws), "evolve", "--rounds", "3"])
        again = CliRunner().invoke(app, ["-C", str(ws), "evolve", "--rounds", "2"])
    assert first.exit_code == 0 and again.exit_code == 0, first.output + again.output
    assert "Done: 1 of 3 round(s) run; stopped early, as the incumbent now scores 1.0 on every val task" in one_line(
        first.output
    )
    assert (
        "Nothing to do: the incumbent already scores 1.0 on every val task, so no round was started "
        "(1 completed in all)"
    ) in one_line(again.output)
