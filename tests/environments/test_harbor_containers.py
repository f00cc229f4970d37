"""Harbor tasks in real containers: `init` then `evolve` against the scripted server with every
task in a container of an image built once; the tests' marker reaches no model request and no
agent-visible file; a train task's failing verifier output reaches the proposer and val's no
role; a kill -9 leaves a container that the next command removes; Ctrl-C removes them within
5 s; a broken build names its log, and through `evolve` is infra on both sides, out of the gate;
an unknown reward key is refused in one line."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import needs, needs_docker
from harborsuites import (
    BASE_IMAGE,
    IDS,
    MARKER,
    containers_of,
    harbor_suite,
    image_id,
    init_harbor,
    remove_images,
    tag_of,
    word_of,
    write_harbor_task,
)
from scripted import SPELL, ScriptedWorld
from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.benchmarks.harbor import HarborSuite
from wikiskill.cli import app
from wikiskill.core.errors import InfrastructureError
from wikiskill.environments.settings import EnvironmentSettings
from wikiskill.knowledge.settings import SkillsSettings
from wikiskill.roles.python_agent import PythonAgent
from wikiskill.roles.reference_agent import NopAgent
from wikiskill.roles.settings import RoleSettings
from wikiskill.run.harbor_tasks import HarborTaskAgent, open_setup
from wikiskill.store.traces import FailureKind
from wikiskill.store.trailers import Decision, Step
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply
from workspaces import hears_ctrl_c, until

TRAIN_ONLY = "test_walrus_trainonly_negative"
VAL_ONLY = "test_zebra_valonly_quux"


class ContainerWorld(ScriptedWorld):
    """The scripted world, with a task agent that works in the container: it looks for the tests
    first (there must be none), then reverses the word right only when a skill's SPELL marker is
    in its system prompt, and finishes."""

    def __init__(self, **options):
        super().__init__(trace_ids=IDS["train"], **options)

    def __call__(self, body: dict) -> Reply | str:
        system = body["messages"][0]["content"]
        if not system.startswith("You are a software engineer"):
            return super().__call__(body)
        question = body["messages"][1]["content"]
        word = word_of(question)
        answer = word[::-1] if SPELL in system else word
        steps = ["ls -la /tests 2>&1; cat /tests/marker.txt 2>&1; pwd; ls", f"printf %s {answer} > answer.txt"]
        done = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if done < len(steps):
            return Reply(tool_calls=[{"name": "bash", "arguments": {"command": steps[done]}}])
        return Reply(tool_calls=[{"name": "finish", "arguments": {"answer": "written"}}])


def harbor_workspace(tmp_path: Path, base_url: str, suite: Path, extra: dict | None = None) -> Path:
    ws = tmp_path / "ws"
    result = init_harbor(ws, suite, base_url)
    assert result.exit_code == 0, result.output
    config = yaml.safe_load((ws / "wikiskill.yaml").read_text())
    config.update({"harbor": {"ids": IDS}, "proposer": {"min_trace_reads": 2}, "concurrency": 2, **(extra or {})})
    (ws / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    return ws


@pytest.fixture()
def suite(tmp_path):
    suite = harbor_suite(
        tmp_path, {"rev-cat": TRAIN_ONLY, "rev-dog": TRAIN_ONLY, "rev-owl": VAL_ONLY, "rev-emu": VAL_ONLY}
    )
    yield suite
    remove_images([tag_of(suite / "rev-cat")])


@needs_docker
def test_evolve_runs_every_task_in_a_container_its_tests_hidden_until_verification(tmp_path, suite):
    with FakeOpenAIServer(ContainerWorld()) as server:
        ws = harbor_workspace(tmp_path, server.base_url, suite)
        first = api.evolve(api.open_workspace(ws), 1)
        tag = tag_of(suite / "rev-cat")
        built, log = image_id(tag), ws / ".wikiskill" / "images" / f"build-{tag.partition(':')[2]}.log"
        log_written = log.stat().st_mtime_ns
        again = api.evaluate(api.open_workspace(ws), "train", ref="main")  # main's skill: new runs, same image
        requests = server.requests

    assert first.rounds_completed == 1 and first.incumbent == 1.0  # the skilled agent reverses val's words
    assert [skill.name for skill in api.load_skills(api.open_workspace(ws))] == ["spell-letters"]
    assert [trajectory.score for trajectory in again.runs[0]] == [1.0, 1.0]
    assert image_id(tag) == built and log.stat().st_mtime_ns == log_written  # a cache hit, no second build
    assert "Successfully built" in log.read_text() or "Successfully tagged" in log.read_text()
    agent_results = [m["content"] for body in requests for m in body["messages"] if m["role"] == "tool"]
    assert any("No such file or directory" in text and "/app" in text for text in agent_results)
    firsts = [
        body["messages"][1]["content"]
        for body in requests
        if body["messages"][0]["content"].startswith("You are a software engineer")
    ]
    assert firsts and all("README (6 bytes)" in text and "ready" in text for text in firsts)  # listed from inside
    assert not any(MARKER in json.dumps(body) for body in requests)  # the agent's container never held tests/
    train = json.loads((ws / "raw" / "r001" / "train" / "rev-cat.json").read_text())
    assert train["score"] == 0.0 and TRAIN_ONLY in train["feedback"]
    proposer = [json.dumps(body) for body in requests if "Skill Proposer Agent" in body["messages"][0]["content"]]
    assert proposer and any(TRAIN_ONLY in text for text in proposer)
    assert not any(VAL_ONLY in json.dumps(body) for body in requests)
    history = subprocess.run(["git", "log", "--all", "-p"], cwd=ws, capture_output=True, text=True).stdout
    assert TRAIN_ONLY in history and VAL_ONLY not in history and MARKER not in history
    assert containers_of(ws) == []


@needs_docker
def test_check_suite_says_oracle_scores_one_nop_zero_and_names_a_broken_builds_log(tmp_path, suite):
    broken = write_harbor_task(suite, "rev-yak", "yak", dockerfile="FROM wikiskill/base:bookworm\nRUN exit 3\n")
    try:
        checks = {check.task_id: check for check in api.check_suite(suite)}
    finally:
        remove_images([tag_of(broken)])
    assert all(checks[task_id].sound for task_id in IDS["train"] + IDS["val"])
    assert (checks["rev-cat"].oracle, checks["rev-cat"].nop) == (1.0, 0.0)
    problem = checks["rev-yak"].problem
    assert not checks["rev-yak"].sound and "failed to build (exit" in problem
    log = Path(problem.split("its log: ")[1])
    assert log.is_file() and "exit 3" in log.read_text()
    assert containers_of(suite) == []


@pytest.mark.slow
@needs_docker
def test_evolve_records_a_task_whose_image_will_not_build_as_infra_never_zero_and_out_of_the_gate(tmp_path, suite):
    nonce = uuid.uuid4().hex  # in the failing step's command: finds any build container left behind
    broken = write_harbor_task(suite, "rev-yak", "yak", dockerfile=f"FROM {BASE_IMAGE}\nRUN exit 3 # {nonce}\n")
    ids = {"train": IDS["train"], "val": [*IDS["val"], "rev-yak"]}
    try:
        with FakeOpenAIServer(ContainerWorld()) as server:
            extra = {"harbor": {"ids": ids}, "gate": {"max_infra_share": 0.5}}
            ws = harbor_workspace(tmp_path, server.base_url, suite, extra)
            result = api.evolve(api.open_workspace(ws), 1)
    finally:
        remove_images([tag_of(broken)])
    log = ws / ".wikiskill" / "images" / f"build-{tag_of(broken).partition(':')[2]}.log"
    for evaluation in ("baseline", "r001"):
        rows = [json.loads(line) for line in (ws / "raw" / evaluation / "val.jsonl").read_text().splitlines()]
        yak = next(row for row in rows if row["id"] == "rev-yak")
        assert yak["failure"] == "infra" and yak["score"] is None, yak
        assert "2 tries" in yak["error"] and f"failed to build (exit 3); its log: {log}" in yak["error"]
    assert "exit 3" in log.read_text()
    # main 0 of 2, the candidate 2 of 2: the broken task counts on neither side, so 1.0, not 2/3
    assert result.rounds_completed == 1 and result.incumbent == 1.0
    gate = next(commit for commit in api.open_workspace(ws).log("main") if commit.meta.step == Step.GATE)
    assert gate.meta.decision == Decision.ACCEPTED and gate.meta.infra == 1 and gate.meta.tasks == 2
    commands = subprocess.run(
        ["docker", "ps", "-a", "--no-trunc", "--format", "{{.Command}}"], capture_output=True, text=True, check=True
    )
    assert nonce not in commands.stdout  # the failed builds left no intermediate container
    assert containers_of(ws) == []


@needs_docker
def test_an_unknown_reward_key_is_refused_in_one_line(tmp_path, suite):
    for task_id in IDS["train"] + IDS["val"]:
        test_sh = suite / task_id / "tests" / "test.sh"
        text = test_sh.read_text().replace("/logs/verifier/reward.txt", "/logs/verifier/reward.json")
        test_sh.write_text(
            text.replace("echo 1 >", "echo '{\"passed\": 1}' >").replace("echo 0 >", "echo '{\"passed\": 0}' >")
        )
    with FakeOpenAIServer(ContainerWorld()) as server:
        ws = harbor_workspace(tmp_path, server.base_url, suite, {"harbor": {"ids": IDS, "reward_key": "score"}})
        result = CliRunner().invoke(app, ["-C", str(ws), "eval", "--split", "val", "--ref", "main"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert "harbor.reward_key 'score' is not a key of" in lines[-1] and "(its keys: passed)" in lines[-1]
    assert containers_of(ws) == []


@needs("docker", package="docker.io")
def test_a_daemon_that_is_not_running_is_refused_saying_how_to_start_it(tmp_path, monkeypatch):
    suite = harbor_suite(tmp_path)
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    result = init_harbor(tmp_path / "ws", suite)
    assert result.exit_code == 1 and "the docker daemon is not running" in result.output
    assert "sudo systemctl start docker" in result.output and not (tmp_path / "ws").exists()


class SlowAgent:
    """A task agent whose first command runs a minute, for the process to be stopped meanwhile."""

    def __call__(self, body: dict) -> Reply | str:
        return Reply(tool_calls=[{"name": "bash", "arguments": {"command": "sleep 60"}}])


def start_eval(ws: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "wikiskill", "-C", str(ws), "eval", "--split", "val", "--ref", "main"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=hears_ctrl_c,
    )


@pytest.mark.slow
@needs_docker
def test_after_a_kill_9_the_next_command_removes_the_labelled_container(tmp_path, suite):
    with FakeOpenAIServer(SlowAgent()) as server:
        ws = harbor_workspace(tmp_path, server.base_url, suite)
        process = start_eval(ws)
        try:
            left = until(lambda: containers_of(ws), timeout=120)
        finally:
            process.kill()
            process.wait()
        assert set(left) <= set(containers_of(ws))  # kill -9: nothing ran to remove them
        other = subprocess.run(
            [
                "docker",
                "run",
                "-d",
                "--label",
                f"wikiskill.workspace={tmp_path / 'other'}",
                "--label",
                "wikiskill.pid=999999999",
                "--entrypoint",
                "sleep",
                "wikiskill/base:bookworm",
                "infinity",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
    try:
        with FakeOpenAIServer(ContainerWorld()) as server:
            api.evaluate(api.open_workspace(ws), "val", ref="main", options=RunOptions(api_base=server.base_url))
        assert containers_of(ws) == []
        assert containers_of(tmp_path / "other") == [other.stdout.strip()[:12]]  # another workspace's: left alone
    finally:
        subprocess.run(["docker", "rm", "-f", other.stdout.strip()], capture_output=True)


@pytest.mark.slow
@needs_docker
def test_ctrl_c_removes_the_running_containers_within_5_seconds(tmp_path, suite):
    with FakeOpenAIServer(SlowAgent()) as server:
        ws = harbor_workspace(tmp_path, server.base_url, suite)
        process = start_eval(ws)
        try:
            until(lambda: containers_of(ws), timeout=120)
            time.sleep(1)  # the agent's command is running in it
            process.send_signal(signal.SIGINT)
            stopped = time.monotonic()
            until(lambda: not containers_of(ws), timeout=5)
            assert time.monotonic() - stopped < 5
            process.wait(timeout=30)
        finally:
            process.kill()
            process.wait()
    assert process.returncode == 130


def play_one(tmp_path: Path, suite_dir: Path, agent, task_id: str = "rev-cat"):
    """One task of `suite_dir` played by `agent` in its container, verified; the trajectory."""
    suite = HarborSuite(suite_dir)
    setup = open_setup(EnvironmentSettings(), tmp_path / "state", workspace=tmp_path)
    task = suite.as_task(suite.by_id[task_id], "train")
    return asyncio.run(HarborTaskAgent(agent, suite, setup).run(task))


async def reverse_through_the_handle(run):
    """A Python runner that works in the container through its handle."""
    word = word_of(run.task)
    result = await run.environment.run(f"printf %s {word[::-1]} > answer.txt && pwd", 30, 1000)
    scratch = run.workdir / "copied"
    await run.environment.copy_out("answer.txt", scratch)
    return f"{result.output.strip()} {scratch.read_text()}"


@needs_docker
def test_a_python_runner_works_in_the_container_through_its_handle(tmp_path, suite):
    agent = PythonAgent(reverse_through_the_handle, HarborSuite(suite), [], SkillsSettings(), RoleSettings())
    trajectory = play_one(tmp_path, suite, agent)
    assert trajectory.score == 1.0 and trajectory.prediction == "/app tac" and trajectory.error is None
    assert containers_of(tmp_path) == []


async def copy_into_new_folders(run):
    """Makes the workdir another user's with a mode of its own, copies a folder and a file to paths
    whose folders do not exist yet, and reports what the container holds then."""
    folder = run.workdir / "data"
    (folder / "inner").mkdir(parents=True)
    (folder / "inner" / "a.txt").write_text("alpha")
    (folder / "run.sh").write_text("#!/bin/sh\n")
    (folder / "run.sh").chmod(0o755)
    (run.workdir / "note.txt").write_text("beta")
    await run.environment.run("chown 1234:1234 . && chmod 710 .", 30, 1000)
    await run.environment.copy_in(folder, "deep/er/data")
    await run.environment.copy_in(run.workdir / "note.txt", "/opt/x/note.txt")
    held = await run.environment.run(
        "cat deep/er/data/inner/a.txt /opt/x/note.txt; stat -c '%u %a' . deep/er/data/run.sh", 30, 1000
    )
    return held.output


@needs_docker
def test_copying_in_makes_the_missing_folders_and_leaves_the_existing_ones_as_they_were(tmp_path, suite):
    agent = PythonAgent(copy_into_new_folders, HarborSuite(suite), [], SkillsSettings(), RoleSettings())
    trajectory = play_one(tmp_path, suite, agent)
    assert trajectory.prediction.split("\n") == ["alphabeta1234 710", "0 755"] and trajectory.error is None


@needs_docker
def test_a_junit_report_of_the_verifier_becomes_the_feedback(tmp_path, suite):
    (suite / "rev-cat" / "tests" / "test.sh").write_text(
        "#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n"
        "cat > /logs/verifier/junit.xml <<'XML'\n<testsuite><testcase classname='t' name='test_reversed'>"
        "<failure message='expected tac, got nothing'/></testcase><testcase name='test_exists'/></testsuite>\nXML\n"
        "echo the verifier ran\nexit 1\n"
    )
    trajectory = play_one(tmp_path, suite, NopAgent())
    assert trajectory.score == 0.0 and trajectory.failure is None
    assert "FAILED t.test_reversed: expected tac, got nothing" in trajectory.feedback
    assert "the verifier ran" in trajectory.feedback and "status 1" in trajectory.feedback


@needs_docker
def test_a_verifier_that_writes_no_reward_is_infra_quoting_its_last_lines_not_a_zero(tmp_path, suite):
    (suite / "rev-cat" / "tests" / "test.sh").write_text(
        "#!/bin/bash\necho starting\necho 'ModuleNotFoundError: No module named requests' >&2\nexit 2\n"
    )
    with pytest.raises(InfrastructureError) as raised:
        play_one(tmp_path, suite, NopAgent())
    message = str(raised.value)
    assert "rev-cat: the verifier wrote no reward.txt or reward.json" in message
    assert "status 2" in message and "its last lines:" in message
    # stdout and stderr reach the quote as the engine interleaves them
    assert "starting" in message and "ModuleNotFoundError: No module named requests" in message
    assert containers_of(tmp_path) == []


@needs_docker
def test_an_agent_past_the_tasks_timeout_fails_the_task_marked_timeout(tmp_path):
    suite = tmp_path / "suite"
    write_harbor_task(suite, "rev-cat", "cat", agent_timeout=2.0, nonce=tmp_path.name)

    class Sleeper:
        async def play_in(self, task, environment):
            await environment.run("sleep 30", 60, 1000)

    try:
        trajectory = play_one(tmp_path, suite, Sleeper())
    finally:
        remove_images([tag_of(suite / "rev-cat")])
    assert trajectory.score == 0.0 and trajectory.failure is FailureKind.TIMEOUT
    assert trajectory.error == "the agent ran past the task's timeout of 2 s"
    assert containers_of(tmp_path) == []


@needs_docker
def test_eval_with_the_oracle_scores_every_task_one_and_with_nop_zero(tmp_path, suite):
    with FakeOpenAIServer(ContainerWorld()) as server:
        ws = harbor_workspace(tmp_path, server.base_url, suite)
        scores = {}
        for agent in ("oracle", "nop"):
            evaluated = api.evaluate(api.open_workspace(ws), "val", ref="main", options=RunOptions(agent=agent))
            scores[agent] = [trajectory.score for trajectory in evaluated.runs[0]]
        assert server.requests == []  # neither asks a model
    assert scores == {"oracle": [1.0, 1.0], "nop": [0.0, 0.0]}


@needs_docker
def test_a_ctrf_report_of_the_verifier_becomes_the_feedback(tmp_path, suite):
    report = {
        "results": {
            "tests": [
                {"name": "test_reversed", "status": "failed", "message": "got nothing"},
                {"name": "test_exists", "status": "passed"},
            ]
        }
    }
    (suite / "rev-cat" / "tests" / "test.sh").write_text(
        f"#!/bin/bash\necho 0 > /logs/verifier/reward.txt\necho '{json.dumps(report)}' > /logs/verifier/ctrf.json\n"
    )
    trajectory = play_one(tmp_path, suite, NopAgent())
    assert trajectory.score == 0.0 and "FAILED test_reversed: got nothing" in trajectory.feedback
    assert "test_exists" not in trajectory.feedback


@needs_docker
def test_the_terminal_bench_2_style_fixture_runs_unchanged_its_oracle_one_and_nop_zero():
    fixture = Path(__file__).parents[1] / "fixtures" / "harbor" / "tb2-greeting"
    try:
        (check,) = api.check_suite(fixture)
    finally:
        remove_images([tag_of(fixture)])
    assert check.task_id == "tb2-greeting" and (check.oracle, check.nop) == (1.0, 0.0) and check.sound
