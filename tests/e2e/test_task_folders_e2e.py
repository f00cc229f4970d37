"""A `tasks:` suite evolves end to end against the scripted server: scored by its pytest check
(the train feedback reaches the maintainer and the proposer, val's never does), or by an LLM
judge whose verdicts are averaged over `judge.samples`."""

import json
import re
import subprocess
import sys

import pytest

from scripted import ScriptedWorld
from taskfolders import bugfix_suite, folder_workspace, install_runner, write_task
from wikiskill import api
from wikiskill.loop.harness import Harness
from wikiskill.store.trailers import Step, Trailers
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

TRAIN_ONLY = "test_walrus_trainonly_negative"
VAL_ONLY = "test_zebra_valonly_quux"


@pytest.fixture()
def runner_module(tmp_path, monkeypatch):
    yield install_runner(tmp_path, monkeypatch)
    sys.modules.pop("bugfix_agent", None)


def role_of(body: dict) -> str:
    system = body["messages"][0]["content"]
    return system.split(".")[0].removeprefix("You are a ").removeprefix("You are an ")


def test_a_pytest_scored_suite_evolves_and_only_train_feedback_reaches_the_roles(tmp_path, runner_module, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    suite = bugfix_suite(tmp_path, {"fix-a": TRAIN_ONLY, "fix-c": VAL_ONLY})
    with FakeOpenAIServer(ScriptedWorld(trace_ids=["fix-a", "fix-b"])) as server:
        ws = folder_workspace(
            tmp_path / "ws", suite, server.base_url, runner_module, proposer={"min_trace_reads": 2}
        )  # two train tasks
        result = api.evolve(ws, 1)
        requests = server.requests

    assert result.rounds_completed == 1 and result.incumbent == 1.0  # the skilled agent fixes val
    assert [s.name for s in api.load_skills(ws)] == ["spell-letters"]
    train = json.loads((ws.root / "raw" / "r001" / "train" / "fix-a.json").read_text())
    assert train["kind"] == "workdir" and train["score"] == 0.0 and TRAIN_ONLY in train["feedback"]
    proposer = [json.dumps(body) for body in requests if role_of(body) == "Skill Proposer Agent"]
    maintainer = [json.dumps(body) for body in requests if role_of(body) == "Wiki Maintainer Agent"]
    assert proposer and any(TRAIN_ONLY in text for text in proposer)
    assert maintainer and any(TRAIN_ONLY in text for text in maintainer)
    assert not any(VAL_ONLY in json.dumps(body) for body in requests)
    history = subprocess.run(
        ["git", "log", "--all", "-p"], cwd=ws.root, capture_output=True, text=True, check=True
    ).stdout
    assert TRAIN_ONLY in history and VAL_ONLY not in history  # no val feedback lands where roles read
    baseline = api.evaluate(ws, "val", ref="baseline")  # though the val check did report it
    assert any(VAL_ONLY in (t.feedback or "") for t in baseline.runs[0])


class JudgeWorld:
    """Answers the judge only: its k-th verdict on a task passes the first 3-k of 3 expectations
    (1, 2/3, 1/3: mean 2/3), or scores a rubric 0.2, 0.5, 0.8 (mean 0.5)."""

    RUBRIC = (0.2, 0.5, 0.8)

    def __init__(self):
        self.asked: dict[str, int] = {}
        self.prompts: list[str] = []

    def __call__(self, body: dict) -> Reply | str:
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        assert system.startswith("You are a Judge"), system[:80]
        task = re.search(r"# Task\nTask (.+)", user).group(1)
        k = self.asked.get(task, 0)
        self.asked[task] = k + 1
        self.prompts.append(user)
        if "# Expectations" in user:
            verdicts = [{"passed": i < 3 - k, "evidence": f"sample {k} on {i}"} for i in range(3)]
            return json.dumps({"expectations": verdicts, "feedback": f"verdict {k}"})
        return json.dumps({"score": self.RUBRIC[k], "feedback": f"rubric verdict {k}"})


def judged_suite(tmp_path):
    suite = tmp_path / "judged"
    suite.mkdir()
    (suite / "suite.yaml").write_text("scorer: judge\n")
    for split, task_id in (("train", "t1"), ("test", "t9")):
        write_task(suite, split, task_id, prompt=f"Task {task_id}.", rubric="Be helpful.")
    write_task(
        suite,
        "val",
        "ticket",
        prompt="Task ticket: answer the support ticket.",
        expectations="Greets the user\nNames the fix\nOffers follow-up\n",
    )
    write_task(suite, "val", "essay", prompt="Task essay: write the summary.", rubric="Summarises the file.")
    return suite


def test_a_judged_suite_averages_three_verdicts_per_task(tmp_path, runner_module, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    world = JudgeWorld()
    with FakeOpenAIServer(world) as server:
        ws = folder_workspace(
            tmp_path / "ws", judged_suite(tmp_path), server.base_url, runner_module, judge={"samples": 3}
        )
        with Harness.open(ws) as harness:  # what `evolve` does around an evaluation, costs and all
            harness.publishing.begin_step()
            evaluated = harness.evaluating.evaluate("main", "val", "judged")
            harness.publishing.commit("judged val", Trailers(round=0, step=Step.BASELINE))

    message = subprocess.run(
        ["git", "log", "-1", "--format=%B"], cwd=ws.root, capture_output=True, text=True, check=True
    ).stdout
    assert "Wikiskill-Tokens-Judge: " in message and "Wikiskill-Cost-Judge-USD: " in message  # its own cost line
    assert world.asked == {"ticket: answer the support ticket.": 3, "essay: write the summary.": 3}
    assert evaluated.evaluation.scores == {"ticket": pytest.approx(2 / 3), "essay": pytest.approx(0.5)}
    assert all("+++ b/answer.txt" in prompt and "+not sure" in prompt for prompt in world.prompts)
    ticket = next(t for t in evaluated.runs[0] if t.task_id == "ticket")
    assert "FAILED expectation: Offers follow-up (sample 1 on 2)" in ticket.feedback  # the verdict nearest the mean
