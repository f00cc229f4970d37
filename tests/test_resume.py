"""`kill -9` of a real `wikiskill evolve` at chosen points, then the same command again: it finishes
the requested rounds with the history of an uninterrupted run, recomputes no finished task, and
leaves git consistent (see benchmarks/kill_resume.py, which also sweeps random points)."""

import importlib.util
import sys
from pathlib import Path

import pytest

from scripted import ScriptedWorld
from test_workspace import WorldModel, evolve_scripted, scripted_workspace
from wikiskill.loop.evolve import evolve
from wikiskill.loop.harness import Harness, QuietReporter
from wikiskill.testing.fakeserver import FakeOpenAIServer

pytestmark = pytest.mark.slow


def _load_benchmark():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "kill_resume.py"
    spec = importlib.util.spec_from_file_location("kill_resume", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["kill_resume"] = module  # the fork server imports it by this name
    spec.loader.exec_module(module)
    return module


kill_resume = _load_benchmark()

POINTS = {  # kills, one per run (k counts events of that run; see kill_resume.Watcher)
    "mid-rollout, with finished tasks cached": ["result:9"],
    "mid-commit, before a ref moves": ["import:4"],
    "around the merge's ref move, before the tree is synced": ["marker:4"],
    "after the rejected tag, before its gate commit": ["ref:16"],
    "after the validation commit, then mid-commit of the next rollout": ["ref:7", "import:2"],
    "after the last round's tag, before the run is marked finished": ["ref:19"],
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


class DiesAfter(QuietReporter):
    """A run killed right after it printed `line` (SystemExit stands in for SIGKILL here)."""

    def __init__(self, line: str):
        self.line = line

    def info(self, message: str) -> None:
        if self.line in message:
            raise SystemExit("killed")


def interrupted(ws, rounds: int, line: str) -> None:
    model = WorldModel(ScriptedWorld())
    with pytest.raises(SystemExit):
        evolve(Harness(ws, reporter=DiesAfter(line), model_factory=lambda role: model), rounds)


def test_rounds_count_for_the_run_being_resumed(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    interrupted(ws, 3, "complete (1 of 3)")
    assert evolve_scripted(ws, rounds=3).rounds_completed == 3  # rounds 2 and 3, not 3 more
    assert evolve_scripted(ws, rounds=1).rounds_completed == 4  # a new run


def test_a_run_killed_after_reporting_its_last_round_is_complete(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    interrupted(ws, 2, "complete (2 of 2)")
    head = ws.head()
    result = evolve_scripted(ws, rounds=2)  # the same command again has nothing left to do
    assert (result.rounds_completed, result.decisions, ws.head()) == (2, [], head)
    assert not (ws.state_dir / "run.json").exists()
