"""`kill -9` of a real `wikiskill evolve` between the batches of a sequential validation, then
`wikiskill evolve` for the rounds still missing: the same verdicts, on the same number of tasks,
as an uninterrupted run, each look committed once (none decided twice) and no finished task run
again. A git shim
(benchmarks/kill_gate.py) kills the run just before or after the n-th publish on the branch."""

import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import kill_gate  # noqa: E402
import kill_resume  # noqa: E402
from scripted import ScriptedWorld, reversal_suite  # noqa: E402
from wikiskill import api  # noqa: E402
from wikiskill.store.workspace import Workspace  # noqa: E402
from wikiskill.testing.fakeserver import FakeOpenAIServer  # noqa: E402

pytestmark = pytest.mark.slow

ROUNDS = ("--rounds", "2")
POINTS = {  # (round's branch, before/after, n-th publish on it: 1 is the proposal, 2 the first look)
    "after round 1's first look": ("skill/r001-spell-letters", "after", 2),
    "before round 2's third look, its batch run": ("skill/r002-useless-hint", "before", 4),
}


def sequential_workspace(ws: Path, suite: Path, base_url: str) -> Path:
    api.init_workspace(ws, benchmark=f"jsonl:{suite}", model="openai/fake-model", api_base=base_url, concurrency=4)
    config = yaml.safe_load((ws / "wikiskill.yaml").read_text())
    config["gate"] = {"policy": "sequential", "batch": 5}
    (ws / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    kill_resume.git(ws, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qam", "sequential gate")
    return ws


def verdicts(ws: Path) -> list[tuple[str, ...]]:
    """Each gate's decision, tasks used, look and boundary crossed."""
    keys = ("Decision", "Tasks", "Look", "Crossed")
    fmt = "%x1f".join(f"%(trailers:key=Wikiskill-{key},valueonly)" for key in keys)
    out = kill_resume.git(ws, "log", "--first-parent", "--reverse", "--grep= gate: ", f"--format={fmt}%x1e", "main")
    return [
        tuple(part.strip() for part in record.strip().split("\x1f")) for record in out.split("\x1e") if record.strip()
    ]


def looks(ws: Path, ref: str) -> list[str]:
    return kill_resume.git(ws, "log", "--format=%(trailers:key=Wikiskill-Look,valueonly)", ref).split()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    root = tmp_path_factory.mktemp("kill-sequential")
    suite = reversal_suite(root / "suite", 40)
    start = kill_gate.Starter(kill_gate.GitShim(root / "shim"), fork_server=True)
    with FakeOpenAIServer(ScriptedWorld()) as server:
        ws = sequential_workspace(root / "reference", suite, server.base_url)
        run = kill_resume.run_evolve(ws, start=start, extra=ROUNDS)
        assert run.exit_code == 0, run.stderr
        yield server, suite, start, ws


def test_the_uninterrupted_run_stops_both_validations_early(reference):
    _, _, _, ws = reference
    assert verdicts(ws) == [("accepted", "15", "3", "efficacy"), ("rejected", "25", "5", "futility")]


@pytest.mark.parametrize("name", POINTS)
def test_a_run_killed_between_batches_resumes_to_the_same_verdicts_on_the_same_tasks(reference, tmp_path, name):
    server, suite, start, expected = reference
    branch, when, n = POINTS[name]
    ws = sequential_workspace(tmp_path / "ws", suite, server.base_url)
    start.shim.reset(kill_gate.KillPoint(when, n, f"update-ref refs/heads/{branch} <id> <id>"))
    killed = kill_resume.run_evolve(ws, start=start, extra=ROUNDS)
    assert killed.exit_code == -9, killed.stderr
    start.shim.reset()
    left = kill_resume.rounds_left(ws, int(ROUNDS[1]))  # `--rounds N` means N more from now
    resumed = kill_resume.run_evolve(ws, start=start, extra=("--rounds", str(left)))
    assert resumed.exit_code == 0, resumed.stderr
    assert verdicts(ws) == verdicts(expected)
    for ref in ("round/001^2", "rejected/r002-useless-hint"):
        assert looks(ws, ref) == looks(expected, ref)  # every look once: none decided again
    assert kill_resume.signature(ws) == kill_resume.signature(expected)
    twice = [task for task, count in kill_resume.cached_results(ws).items() if count > 1]
    assert twice == [] and kill_resume.consistency_problems(ws) == []
    assert api.audit(Workspace(ws)).problems == []
