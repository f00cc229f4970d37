"""The stuck detector on the scripted local server: the same action with the same result three
times in a row gets one message naming it, a fourth ends the task as `failure: stuck`, a task
failure scored 0 (never infra); an action whose result changes is no repetition."""

import asyncio

from test_file_edits import TASK, agent, calc_workdir, told

from taskfolders import BUGGY
from wikiskill import api
from wikiskill.store.traces import FailureKind
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply


def always(command: str):
    return lambda body: Reply(tool_calls=[{"name": "bash", "arguments": {"command": command}}])


def test_three_identical_actions_get_the_message_and_a_fourth_ends_the_task_as_stuck(tmp_path):
    workdir = calc_workdir(tmp_path)
    with FakeOpenAIServer(always("cat calc.py")) as server:
        trajectory = asyncio.run(agent(server, max_steps=30).play(TASK, workdir))
    assert len(server.requests) == 4  # not the 30 steps the limit allows
    assert trajectory.failure is FailureKind.STUCK and not trajectory.infra
    assert trajectory.error == "stuck: the same action with the same result 4 times in a row"
    warnings = [text for text in told(server) if "same thing" in text]
    assert len(warnings) == 1 and "3 times in a row" in warnings[0] and "cat calc.py" in warnings[0]
    assert "no file has been changed yet" in warnings[0] and "fenced block" in warnings[0]
    fourth = server.requests[3]["messages"]
    assert fourth[-1]["role"] == "user" and fourth[-1]["content"] == warnings[0]


def test_a_repeated_action_whose_result_changes_is_no_repetition(tmp_path):
    workdir = calc_workdir(tmp_path)
    with FakeOpenAIServer(always("echo x >> log.txt; wc -l < log.txt")) as server:
        trajectory = asyncio.run(agent(server, max_steps=6).play(TASK, workdir))
    assert trajectory.failure is None and trajectory.error == "no finish after 6 steps"
    assert not [text for text in told(server) if "same thing" in text]


def test_a_stuck_task_is_scored_as_a_failure_not_left_out_as_infra(tmp_path, monkeypatch):
    from test_shell_agent import workdir_suite_workspace

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(always("cat calc.py")) as server:
        ws = workdir_suite_workspace(tmp_path, server.base_url)
        result = api.evaluate(ws, "val")
    runs = result.runs[0]
    assert [(t.score, t.failure) for t in runs] == [(0.0, FailureKind.STUCK)] * 2
    assert [t.outcome()["failure"] for t in runs] == ["stuck", "stuck"] and (tmp_path / "suite").exists()
    assert BUGGY  # the suite's calc.py was never fixed: each task scored 0
