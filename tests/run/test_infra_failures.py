"""A check that could not run is not the agent's failure: a task-folder suite whose check, for
some tasks, is a Python script that raises (its crashes ruled infra by suite.yaml's `crash:
infra`, the behaviour before crashes were ruled by evidence) or a script whose interpreter is
missing records those tasks as `infra` with the reason, runs them once more, never scores them 0 and leaves them out of
the gate's comparison; past `gate.max_infra_share` the validation is indecisive and the next
`evolve` retries it. A check that runs past its timeout is the task's own failure (`timeout`,
scored 0), unless the suite declares verifier timeouts infra. Real processes, the real scripted
server."""

import asyncio
import json
import stat
import subprocess
import sys
import time
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from scripted import ScriptedWorld
from taskfolders import BUGGY, checks_of, folder_workspace, install_runner, write_task
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.benchmarks import BenchmarkKind, Task
from wikiskill.cli import app
from wikiskill.core.errors import InfrastructureError, ValidationIndecisive
from wikiskill.loop.gate_policies import gate_policy, infra_problem
from wikiskill.loop.settings import GateSettings
from wikiskill.run.infra import RetryInfra
from wikiskill.run.settings import InfraSettings
from wikiskill.store.evaluations import Evaluation
from wikiskill.store.traces import Trajectory
from wikiskill.store.trailers import Decision, Step
from wikiskill.store.workspace import Workspace
from wikiskill.testing.fakeserver import FakeOpenAIServer

CHECK = """#!/bin/sh
# every run is counted; infra.txt (beside the suite, outside its digest) says how a task's check goes
task=$(basename "$WIKISKILL_TASK_DIR")
echo "$task" >> "$WIKISKILL_SUITE_DIR/../runs.log"
mode=$(sed -n "s/^$task //p" "$WIKISKILL_SUITE_DIR/../infra.txt" 2>/dev/null)
case "$mode" in
  raise) exec python3 "$WIKISKILL_SUITE_DIR/crash.py" ;;
  nointerp) exec "$WIKISKILL_SUITE_DIR/needs-python9" ;;
  sleep) exec sleep 30 ;;
  pass) exit 0 ;;
  fail) exit 1 ;;
  agentcode) exec python3 -c "import calc; calc.absolute(-4)" ;;
  flaky) [ -e "$WIKISKILL_SUITE_DIR/../$task.flaked" ] && exit 0
         touch "$WIKISKILL_SUITE_DIR/../$task.flaked"; exec python3 "$WIKISKILL_SUITE_DIR/crash.py" ;;
esac
exec python3 -m pytest -q -p no:cacheprovider
"""
CRASH = """def expected_results():
    return {"calc": "absolute"}["the key the check's author forgot"]


expected_results()
"""
RAISING_CALC = "def absolute(x):\n    raise ValueError('absolute() is not written yet')\n"


def executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def infra_suite(root: Path, splits: dict[str, list[str]], **settings: object) -> Path:
    """A suite checked by CHECK, its crashes ruled infra: every task a buggy calc.py with its tests
    (`agent-*` tasks a calc.py that raises)."""
    suite = root / "suite"
    suite.mkdir(parents=True)
    settings = {"scorer": "command", "command": "./check.sh", "crash": "infra", **settings}
    (suite / "suite.yaml").write_text(yaml.safe_dump(settings))
    executable(suite / "check.sh", CHECK)
    (suite / "crash.py").write_text(CRASH)
    executable(suite / "needs-python9", "#!/nonexistent/bin/python9\nprint('never runs')\n")
    for split, ids in splits.items():
        for task_id in ids:
            calc = RAISING_CALC if task_id.startswith("agent-") else BUGGY
            write_task(suite, split, task_id, files={"calc.py": calc, "test_calc.py": checks_of("test_negative")})
    return suite


def set_modes(root: Path, **modes: str) -> None:
    (root / "infra.txt").write_text("".join(f"{task.replace('_', '-')} {mode}\n" for task, mode in modes.items()))


def runs(root: Path) -> Counter:
    log = root / "runs.log"
    return Counter(log.read_text().split()) if log.exists() else Counter()


def rows(ws: Workspace, ref: str, path: str) -> dict[str, dict]:
    return {row["id"]: row for row in map(json.loads, ws.read_file(ref, path).splitlines())}


def configure(ws: Workspace, **gate: object) -> None:
    config = yaml.safe_load((ws.root / "wikiskill.yaml").read_text())
    config["proposer"] = {"min_trace_reads": 2}  # two train traces to read
    if gate:
        config["gate"] = {**config.get("gate", {}), **gate}
    (ws.root / "wikiskill.yaml").write_text(yaml.safe_dump(config))


@pytest.fixture()
def runner_module(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    yield install_runner(tmp_path, monkeypatch)
    sys.modules.pop("bugfix_agent", None)


def role_of(body: dict) -> str:
    return body["messages"][0]["content"].split(".")[0]


def test_crashed_checks_are_retried_once_recorded_as_infra_and_left_out_of_the_gate(tmp_path, runner_module):
    suite = infra_suite(
        tmp_path,
        {"train": ["fix-a", "fix-b", "crash-t"], "val": ["fix-c", "fix-d", "crash-v", "nointerp-v"], "test": ["fix-e"]},
    )
    set_modes(tmp_path, crash_t="raise", crash_v="raise", nointerp_v="nointerp")
    with FakeOpenAIServer(ScriptedWorld(trace_ids=["fix-a", "fix-b"])) as server:
        ws = folder_workspace(tmp_path / "ws", suite, server.base_url, runner_module)
        configure(ws, max_infra_share=0.5)
        result = api.evolve(ws, 1)
        requests = server.requests

    # baseline and validation: each crashed task ran twice per evaluation, every other task once
    assert runs(tmp_path) == {
        "fix-a": 1,
        "fix-b": 1,
        "crash-t": 2,
        "fix-c": 2,
        "fix-d": 2,
        "crash-v": 4,
        "nointerp-v": 4,
    }
    for path in ("raw/baseline/val.jsonl", "raw/r001/val.jsonl"):
        val = rows(ws, "main", path)
        assert val["crash-v"]["failure"] == "infra" and val["crash-v"]["score"] is None
        assert "the check crashed: KeyError" in val["crash-v"]["error"] and "2 tries" in val["crash-v"]["error"]
        assert val["nointerp-v"]["failure"] == "infra" and val["nointerp-v"]["score"] is None
        assert "status 127" in val["nointerp-v"]["error"]
        assert val["fix-c"]["failure"] is None
    # the two crashed tasks count on neither side: main 0/2, the candidate 2/2, accepted
    assert result.incumbent == 1.0 and [s.name for s in api.load_skills(ws)] == ["spell-letters"]
    gate = next(c for c in ws.log("main") if c.meta.step == Step.GATE)
    assert gate.meta.decision == Decision.ACCEPTED and gate.meta.infra == 2 and gate.meta.tasks == 2
    impact = (ws.root / "wiki" / "skill-impact.md").read_text()
    assert "Left out as infra: 2 (crash-v: candidate: infrastructure failure" in impact
    assert api.audit(ws).problems == []
    configure(ws, max_infra_share=0.1)  # audit replays the left-out tasks from both sides' results
    (problem,) = [problem.split(": ", 1)[1] for problem in api.audit(ws).problems]
    assert problem.startswith(
        "accepted although 2 of 4 tasks failed as infrastructure, more than gate.max_infra_share 0.1 (crash-v: "
        "candidate: infrastructure failure, 2 tries: "
    )
    for task in ("crash-v", "nointerp-v"):  # each task's reason, cut to a few hundred characters
        assert f"{task}: candidate: {rows(ws, 'main', 'raw/r001/val.jsonl')[task]['error'][:100]}" in problem
    configure(ws, max_infra_share=0.5)
    shown = CliRunner().invoke(app, ["-C", str(ws.root), "show", "1"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and "left out as infra: 2 (crash-v:" in shown.output
    page = api.report(ws, tmp_path / "report.html").read_text()
    assert "2 task(s) left out of the comparison as infrastructure failures: crash-v (" in page
    # on train the crashed task is left out of the score and never reaches the maintainer
    train = rows(ws, "main", "raw/r001/train/outcomes.jsonl")
    assert train["crash-t"]["failure"] == "infra" and train["crash-t"]["score"] is None
    rollout = next(c for c in ws.log("main") if c.meta.step == Step.ROLLOUT)
    maintain = next(c for c in ws.log("main") if c.meta.step == Step.MAINTAIN)
    assert "crash-t" not in (maintain.meta.sampled or "") and "1 infra" in rollout.subject
    maintainer = [json.dumps(body) for body in requests if role_of(body) == "You are a Wiki Maintainer Agent"]
    assert maintainer and not any("crash-t" in text for text in maintainer)


SEQUENTIAL = {"policy": "sequential", "batch": 2}
"""Looks of two val tasks in their order: crash-v and fix-c, then fix-d and hard-v."""


@pytest.mark.parametrize(
    ("gate", "share", "kept", "retried"),
    [
        ({}, "1 of 4", 3, {"crash-v": 1}),  # the other tasks' results come from the cache
        (SEQUENTIAL, "1 of 2", 1, {"crash-v": 1, "fix-d": 1, "hard-v": 1}),  # stopped at look 1; look 2 is new
    ],
    ids=["strict", "sequential"],
)
def test_past_the_infra_share_the_validation_is_indecisive_and_the_next_evolve_retries_it(
    tmp_path, runner_module, gate, share, kept, retried
):
    suite = infra_suite(
        tmp_path, {"train": ["fix-a", "fix-b"], "val": ["fix-c", "fix-d", "hard-v", "crash-v"], "test": ["fix-e"]}
    )
    set_modes(tmp_path, hard_v="fail")  # no skill solves it: main stays below 1.0 and round 2 runs
    with FakeOpenAIServer(ScriptedWorld(trace_ids=["fix-a", "fix-b"])) as server:
        ws = folder_workspace(tmp_path / "ws", suite, server.base_url, runner_module)
        configure(ws, **gate)
        api.evolve(ws, 1)  # round 1 proposes spell-letters (strict merges it); round 2 a useless skill
        before = runs(tmp_path)
        set_modes(tmp_path, hard_v="fail", crash_v="raise")
        with pytest.raises(
            ValidationIndecisive,
            match=rf"{share} tasks failed as infrastructure, more than gate.max_infra_share 0.1 .*; nothing was "
            rf"merged; {kept} scored tasks? (is|are) kept, the next `wikiskill evolve` runs only the 1 missing$",
        ):
            api.evolve(ws, 1)
        during = runs(tmp_path)
        branch = next(name for name in ws.refs("refs/heads/") if name.startswith("skill/r002-"))
        indecisive = ws.log(branch)[0]
        assert indecisive.meta.decision == Decision.INDECISIVE and indecisive.meta.fingerprint is None
        assert rows(ws, branch, "raw/r002/val.jsonl")["crash-v"]["failure"] == "infra"
        assert not any(c.meta.round == 2 and c.meta.step == Step.GATE for c in ws.log("main"))

        set_modes(tmp_path, hard_v="fail")
        result = api.evolve(ws, 1)

    assert during["crash-v"] - before["crash-v"] == 2  # tried once more before giving up
    assert runs(tmp_path) - during == Counter(retried)
    assert result.rounds_completed == 2
    gate = next(c for c in ws.log("main") if c.meta.round == 2 and c.meta.step == Step.GATE)
    assert gate.meta.decision == Decision.REJECTED and gate.meta.infra is None and gate.meta.tasks == 4


def test_a_baseline_stopped_by_infra_keeps_its_scored_tasks_and_says_how_many_run_again(tmp_path, runner_module):
    suite = infra_suite(
        tmp_path, {"train": ["fix-a", "fix-b"], "val": ["fix-c", "fix-d", "hard-v", "crash-v"], "test": ["fix-e"]}
    )
    set_modes(tmp_path, hard_v="fail", crash_v="raise")
    nothing = {1: {"action": "no_action", "rationale": "nothing to try"}}
    with FakeOpenAIServer(ScriptedWorld(proposals=nothing, trace_ids=["fix-a", "fix-b"])) as server:
        ws = folder_workspace(tmp_path / "ws", suite, server.base_url, runner_module)
        configure(ws)
        stopped = CliRunner().invoke(app, ["-C", str(ws.root), "evolve", "--rounds", "1"])
        assert stopped.exit_code == 1, stopped.output
        said = " ".join(stopped.output.split())
        said = said[said.index("error: ") :]
        assert said.startswith(
            "error: the baseline of main's skills could not complete (1 of 4 tasks failed as infrastructure, "
            "more than gate.max_infra_share 0.1 (crash-v: infrastructure failure, 2 tries: the check crashed: KeyError"
        ), said
        assert said.endswith(
            "nothing was recorded; 3 scored tasks are kept, the next `wikiskill evolve` runs only the 1 missing"
        )
        assert runs(tmp_path) == {"fix-c": 1, "fix-d": 1, "hard-v": 1, "crash-v": 2}
        assert "baseline" not in ws.refs("refs/tags/")  # nothing recorded

        set_modes(tmp_path, hard_v="fail")
        before = runs(tmp_path)
        resumed = CliRunner().invoke(app, ["-C", str(ws.root), "evolve", "--rounds", "1"])

    assert resumed.exit_code == 0, resumed.output
    assert runs(tmp_path) - before == Counter({"crash-v": 1, "fix-a": 1, "fix-b": 1})  # the baseline ran crash-v alone
    baseline = rows(ws, "main", "raw/baseline/val.jsonl")
    assert {task: row["score"] for task, row in baseline.items()} == {
        "fix-c": 0.0,
        "fix-d": 0.0,
        "hard-v": 0.0,
        "crash-v": 0.0,
    }


def evaluate_suite(tmp_path: Path, name: str, **settings: object) -> tuple[dict, object]:
    """api.evaluate of val on a fresh workspace; the trajectories by task id."""
    suite = infra_suite(
        tmp_path / name,
        {"train": ["fine-t"], "val": ["fine-v", "slow-v", "agent-v"], "test": ["fine-e"]},
        timeout=1,
        **settings,
    )
    set_modes(tmp_path / name, fine_v="pass", slow_v="sleep", agent_v="agentcode")
    ws = api.init_workspace(
        tmp_path / name / "ws",
        benchmark=f"tasks:{suite}",
        model="openai/fake-model",
        api_base="http://127.0.0.1:9/v1",
        agent="python:bugfix_agent:solve",
    )
    evaluated = api.evaluate(ws, "val")
    return {t.task_id: t for t in evaluated.runs[0]}, evaluated.evaluation


def test_a_check_past_its_timeout_is_the_tasks_timeout_failure_and_the_agents_exception_its_failure(
    tmp_path, runner_module
):
    trajectories, evaluation = evaluate_suite(tmp_path, "task")
    slow, agent = trajectories["slow-v"], trajectories["agent-v"]
    assert slow.failure == "timeout" and slow.score == 0.0 and "ran past its timeout of 1 s" in slow.error
    assert agent.failure is None and agent.score == 0.0  # its traceback is in the agent's calc.py
    assert "absolute() is not written yet" in agent.feedback
    assert evaluation.scores == {"fine-v": 1.0, "slow-v": 0.0, "agent-v": 0.0} and not evaluation.infra
    assert runs(tmp_path / "task") == {"fine-v": 1, "slow-v": 1, "agent-v": 1}


def test_a_suite_may_declare_verifier_timeouts_infra(tmp_path, runner_module):
    trajectories, evaluation = evaluate_suite(tmp_path, "infra", verifier_timeout="infra")
    assert trajectories["slow-v"].failure == "infra" and "ran past its timeout" in trajectories["slow-v"].error
    assert evaluation.scores == {"fine-v": 1.0, "agent-v": 0.0} and list(evaluation.infra) == ["slow-v"]
    assert runs(tmp_path / "infra") == {"fine-v": 1, "slow-v": 2, "agent-v": 1}


def test_a_python_scorer_that_raises_is_an_infrastructure_failure(tmp_path, monkeypatch, runner_module):
    (tmp_path / "raising_scorer.py").write_text(
        "from pathlib import Path\n\n\ndef score(task, trajectory, workdir):\n"
        f"    with open({str(tmp_path / 'runs.log')!r}, 'a') as log:\n        log.write(task.id + '\\n')\n"
        "    raise RuntimeError('the scoring service is down')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    suite = infra_suite(tmp_path, {"train": ["fine-t"], "val": ["fine-v"], "test": ["fine-e"]})
    (suite / "suite.yaml").write_text("scorer: python:raising_scorer:score\n")
    try:
        ws = folder_workspace(tmp_path / "ws", suite, "http://127.0.0.1:9/v1", runner_module)
        trajectory = api.evaluate(ws, "val").runs[0][0]
    finally:
        sys.modules.pop("raising_scorer", None)
    assert trajectory.failure == "infra" and trajectory.outcome()["score"] is None
    assert "RuntimeError: the scoring service is down" in trajectory.error
    assert runs(tmp_path) == {"fine-v": 2}


@pytest.mark.parametrize("executor", ["local", "processes"])
def test_infra_tasks_are_retried_once_and_never_cached_in_every_executor(tmp_path, runner_module, executor):
    suite = infra_suite(tmp_path, {"train": ["fine-t"], "val": ["fine-v", "crash-v"], "test": ["fine-e"]})
    set_modes(tmp_path, fine_v="pass", crash_v="raise")
    ws = folder_workspace(tmp_path / "ws", suite, "http://127.0.0.1:9/v1", runner_module)
    first = api.evaluate(ws, "val", options=RunOptions(executor=executor)).evaluation
    assert first.scores == {"fine-v": 1.0} and "the check crashed: KeyError" in first.infra["crash-v"]
    set_modes(tmp_path, fine_v="pass")
    again = api.evaluate(ws, "val", options=RunOptions(executor=executor)).evaluation
    assert again.scores == {"fine-v": 1.0, "crash-v": 0.0} and not again.infra
    assert runs(tmp_path) == {"fine-v": 1, "crash-v": 3}
    assert (
        subprocess.run(
            ["git", "-C", str(ws.root), "status", "--porcelain"], capture_output=True, text=True, check=True
        ).stdout
        == ""
    )


def an_evaluation(scores: dict[str, float], infra: dict[str, str], order: list[str]) -> Evaluation:
    return Evaluation("f", "setup", "skills", scores, infra, tuple(order))


@pytest.mark.parametrize("policy", ["strict", "paired", "no_regression", "sequential"])
def test_every_policy_leaves_a_task_infra_on_either_side_out_of_both(policy):
    order = [f"t{index:02d}" for index in range(12)]
    scored = order[2:]
    candidate = an_evaluation({"t01": 1.0, **{task: 1.0 for task in scored}}, {"t00": "the check crashed"}, order)
    main = an_evaluation({"t00": 1.0, **{task: 0.0 for task in scored}}, {"t01": "no reward"}, order)
    verdict = gate_policy(GateSettings(policy=policy, batch=5)).judge(candidate, main)
    evidence = verdict.evidence
    assert verdict.decision == Decision.ACCEPTED and evidence.fixed == scored[: evidence.n]
    if policy == "sequential":  # accepted at its second look: the first 10 tasks, 8 of them compared
        assert (evidence.look.number, evidence.look.tasks, evidence.n) == (2, 10, 8)
    else:
        assert evidence.n == 10
    assert evidence.left_out == {"t00": "candidate: the check crashed", "t01": "main: no reward"}
    assert (evidence.candidate, evidence.incumbent) == (1.0, 0.0)  # the means of the compared tasks
    assert infra_problem(GateSettings(), candidate, main) == (
        "2 of 12 tasks failed as infrastructure, more than gate.max_infra_share 0.1 (t00: candidate: the "
        "check crashed; t01: main: no reward)"
    )
    assert infra_problem(GateSettings(max_infra_share=0.2), candidate, main) is None


class FailingMachinery:
    """A task agent whose machinery fails the first `failures` times; when it was called is kept."""

    def __init__(self, failures: int):
        self.failures = failures
        self.calls: list[float] = []

    async def run(self, task: Task) -> Trajectory:
        self.calls.append(time.monotonic())
        if len(self.calls) <= self.failures:
            raise InfrastructureError(f"the container would not start (try {len(self.calls)})")
        return Trajectory(task_id=task.id, split=task.split, kind=BenchmarkKind.QA, question=task.question, score=1.0)


def test_infra_retries_sets_the_tries_and_each_retry_waits_twice_as_long_as_the_one_before():
    task = Task(id="t1", split="val", question="q")
    settings = InfraSettings(retries=3, backoff=0.05, backoff_max=0.15)
    assert [settings.delay(retry) for retry in (1, 2, 3, 4)] == [0.05, 0.1, 0.15, 0.15]

    given_up = FailingMachinery(failures=10)
    failed = asyncio.run(RetryInfra(given_up, BenchmarkKind.QA, settings).run(task))
    assert len(given_up.calls) == 4 and failed.infra and failed.retries == 3
    assert failed.error.startswith("infrastructure failure, 4 tries: the container would not start (try 1); then ")
    waits = [later - earlier for earlier, later in pairwise(given_up.calls)]
    assert [round(wait, 2) >= delay for wait, delay in zip(waits, (0.05, 0.1, 0.15), strict=True)] == [True] * 3

    recovered = FailingMachinery(failures=1)
    scored = asyncio.run(RetryInfra(recovered, BenchmarkKind.QA, InfraSettings(backoff=0)).run(task))
    assert len(recovered.calls) == 2 and scored.score == 1.0 and not scored.infra and scored.retries == 1

    never = FailingMachinery(failures=1)
    once = asyncio.run(RetryInfra(never, BenchmarkKind.QA, InfraSettings(retries=0)).run(task))
    assert len(never.calls) == 1 and once.infra and once.error.startswith("infrastructure failure, 1 try: ")


def test_an_evolve_records_each_evaluations_retries_in_its_trailers_and_show_says_them(tmp_path, runner_module):
    suite = infra_suite(
        tmp_path, {"train": ["fix-a", "fix-b"], "val": ["fix-c", "fix-d", "crash-v", "flaky-v"], "test": ["fix-e"]}
    )
    set_modes(tmp_path, crash_v="raise", flaky_v="flaky")
    with FakeOpenAIServer(ScriptedWorld(trace_ids=["fix-a", "fix-b"])) as server:
        ws = folder_workspace(tmp_path / "ws", suite, server.base_url, runner_module)
        configure(ws, max_infra_share=0.5)
        config = yaml.safe_load((ws.root / "wikiskill.yaml").read_text())
        (ws.root / "wikiskill.yaml").write_text(yaml.safe_dump({**config, "infra": {"retries": 2, "backoff": 0}}))
        api.evolve(ws, 1)

    # the baseline: crash-v three tries, flaky-v two; the validation: crash-v three again
    assert runs(tmp_path) == {"fix-a": 1, "fix-b": 1, "fix-c": 2, "fix-d": 2, "crash-v": 6, "flaky-v": 3}
    baseline = next(c for c in ws.log("main") if c.meta.step == Step.BASELINE)
    assert (baseline.meta.retried, baseline.meta.retries, baseline.meta.infra_left) == (2, 3, 1)
    assert "3 tries" in rows(ws, "main", "raw/baseline/val.jsonl")["crash-v"]["error"]
    gate = next(c for c in ws.log("main") if c.meta.step == Step.GATE)
    validate = next(c for c in ws.log(gate.parents[-1]) if c.meta.step == Step.VALIDATE)
    assert (validate.meta.retried, validate.meta.retries, validate.meta.infra_left) == (1, 2, 1)
    rollout = next(c for c in ws.log("main") if c.meta.step == Step.ROLLOUT)
    assert rollout.meta.retried is None  # train is no evaluation
    shown = CliRunner().invoke(app, ["-C", str(ws.root), "show", "1"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "infra retries, validate: 1 task run(s) retried, 2 retry tries, 1 left as infra" in shown.output


CALLING_RUNNER = """import json
import urllib.request


def solve(run):
    \"\"\"Asks the scripted server once per task, naming the task.\"\"\"
    body = {{"model": "fake-model", "messages": [{{"role": "user", "content": "task " + run.task_id}}]}}
    request = urllib.request.Request(
        {url!r}, json.dumps(body).encode(), {{"Content-Type": "application/json", "Authorization": "Bearer sk-test"}}
    )
    urllib.request.urlopen(request).read()
    return "asked"
"""


def test_a_scored_task_is_never_run_again_when_an_evaluation_with_an_infra_task_is_resumed(tmp_path, monkeypatch):
    folder = tmp_path / "agents"
    folder.mkdir()
    suite = infra_suite(tmp_path, {"train": ["fine-t"], "val": ["fine-v", "also-v", "crash-v"], "test": ["fine-e"]})
    set_modes(tmp_path, fine_v="pass", also_v="fail", crash_v="raise")
    monkeypatch.syspath_prepend(str(folder))
    try:
        with FakeOpenAIServer(lambda body: "noted") as server:
            url = f"{server.base_url}/chat/completions"
            (folder / "calling_agent.py").write_text(CALLING_RUNNER.format(url=url))
            ws = folder_workspace(
                tmp_path / "ws", suite, server.base_url, "python:calling_agent:solve", infra={"backoff": 0}
            )
            first = api.evaluate(ws, "val").evaluation
            asked = Counter(body["messages"][0]["content"] for body in server.requests)
            set_modes(tmp_path, fine_v="pass", also_v="fail")
            again = api.evaluate(ws, "val").evaluation
            resumed = Counter(body["messages"][0]["content"] for body in server.requests) - asked
    finally:
        sys.modules.pop("calling_agent", None)
    assert list(first.infra) == ["crash-v"]
    assert asked == {"task fine-v": 1, "task also-v": 1, "task crash-v": 2}
    assert again.scores == {"fine-v": 1.0, "also-v": 0.0, "crash-v": 0.0}
    assert resumed == {"task crash-v": 1}  # fine-v and also-v came from the result cache
