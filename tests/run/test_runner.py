"""The runner through litellm and a local server: results in task order whatever order tasks
finish in, each task at most once, the budget between tasks, and the same in a pool of worker
processes that serves every step of a command."""

import json
import multiprocessing
import os
import re
import shutil
from pathlib import Path

import pytest

from wikiskill.benchmarks import Task
from wikiskill.benchmarks.builtin import ExampleQAFamily
from wikiskill.contracts.running import AgentRecipe, Place
from wikiskill.core.config import Config
from wikiskill.core.errors import BudgetExceeded, ModelError
from wikiskill.knowledge.settings import SkillsSettings
from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.llm.settings import BudgetSettings, LLMSettings
from wikiskill.roles.agent import QAAgent
from wikiskill.roles.settings import RoleSettings
from wikiskill.run.executors.processes import ProcessPool
from wikiskill.run.runner import run_tasks
from wikiskill.store.results import ResultCache
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

N = 12


class Doubling:
    """A QA suite: "What is twice 5?" -> "10"."""

    name = "doubling"
    spec = ExampleQAFamily.spec

    def tasks(self, split):
        return [
            Task(id=f"t{i:02d}", split="train", question=f"What is twice {i}?", answer=str(2 * i)) for i in range(N)
        ]

    def score(self, task, prediction):
        return float(prediction == task.answer)


def answer(body: dict) -> Reply:
    """Right answers; earlier tasks answer later, so tasks finish in reverse order."""
    number = int(re.search(r"twice (\d+)", body["messages"][-1]["content"]).group(1))
    return Reply(
        content=f"<answer>{2 * number}</answer>", delay=0.03 * (N - number), prompt_tokens=10, completion_tokens=3
    )


def agent(server: FakeOpenAIServer, meter: Meter) -> QAAgent:
    model = LiteLLMModel(
        RoleSettings(model="openai/fake-model", api_base=server.base_url), LLMSettings(retries=0), "agent", meter
    )
    return QAAgent(model, Doubling(), [], SkillsSettings())


def test_results_come_back_in_task_order(tmp_path):
    tasks = Doubling().tasks("train")
    finished: list[str] = []
    with FakeOpenAIServer(answer) as server:
        meter = Meter()
        results = run_tasks(
            tasks, agent(server, meter), N, meter, ResultCache(tmp_path, "k"), lambda t: finished.append(t.task_id)
        )
    assert [t.task_id for t in results] == [t.id for t in tasks]
    assert all(t.score == 1.0 and t.prediction == t.expected for t in results)
    assert finished != sorted(finished) and sorted(finished) == [t.id for t in tasks]  # out of order
    assert meter.total.calls == N and meter.total.tokens == 13 * N
    assert sum(t.usage.tokens for t in results) == 13 * N


def test_budget_stops_between_tasks_and_a_rerun_finishes_the_rest(tmp_path):
    tasks = Doubling().tasks("train")
    with FakeOpenAIServer(answer) as server:
        meter = Meter(BudgetSettings(max_calls=5))
        with pytest.raises(BudgetExceeded):
            run_tasks(tasks, agent(server, meter), 1, meter, ResultCache(tmp_path, "k"))
        assert len(server.requests) == 5  # one task at a time: exactly the budget
        meter = Meter(BudgetSettings(max_calls=100))
        results = run_tasks(tasks, agent(server, meter), 4, meter, ResultCache(tmp_path, "k"))
        asked = [body["messages"][-1]["content"] for body in server.requests]
    assert [t.task_id for t in results] == [t.id for t in tasks]
    assert len(asked) == N and len(set(asked)) == N  # no task was asked twice
    assert meter.total.calls == N - 5


def test_a_failing_task_stops_new_ones(tmp_path):
    def fail_on_three(body: dict) -> Reply:
        if "twice 3?" in body["messages"][-1]["content"]:
            return Reply(status=401, content="bad key")
        return Reply(content="<answer>0</answer>")

    with FakeOpenAIServer(fail_on_three) as server:
        meter = Meter()
        with pytest.raises(ModelError, match="bad key"):
            run_tasks(Doubling().tasks("train"), agent(server, meter), 2, meter, ResultCache(tmp_path, "k"))
    assert len(server.requests) < N


def suite(directory: Path) -> Path:
    """A jsonl suite on disk for the workers to load (its tasks are handed to them directly)."""
    directory.mkdir()
    for split in ("train", "val", "test"):
        rows = [{"id": t.id, "question": t.question, "answer": t.answer} for t in Doubling().tasks(split)]
        (directory / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return directory


@pytest.mark.slow
def test_a_process_pool_keeps_order_budget_and_cache_across_steps(tmp_path):
    tasks = Doubling().tasks("train")
    finished: list[str] = []
    with FakeOpenAIServer(answer) as server:
        config = Config(
            benchmark=f"jsonl:{suite(tmp_path / 'suite')}",
            model="openai/fake-model",
            api_base=server.base_url,
            budget=BudgetSettings(max_calls=7),
        )
        recipe = AgentRecipe(config, ())
        pool = ProcessPool(Place(tmp_path, tmp_path / "state"), 2, preload_litellm=True)
        try:
            meter = Meter(config.budget)
            with pytest.raises(BudgetExceeded):
                pool.run(recipe, tasks, 1, meter, ResultCache(tmp_path, "k"))
            assert len(server.requests) == 7  # the command starts every task: the budget holds exactly
            assert meter.total.calls == 7
            workers = [worker.process.pid for worker in pool._workers]
            meter = Meter()
            results = pool.run(
                recipe, tasks, 4, meter, ResultCache(tmp_path, "k"), lambda t: finished.append(t.task_id)
            )
            assert [worker.process.pid for worker in pool._workers] == workers  # the same pool, not a new one
        finally:
            pool.close()
        asked = [body["messages"][-1]["content"] for body in server.requests]
    assert [t.task_id for t in results] == [t.id for t in tasks] and all(t.score == 1.0 for t in results)
    assert sorted(finished) == [t.id for t in tasks]
    assert len(asked) == N and len(set(asked)) == N
    assert meter.total.calls == N - 7


def test_progress_counts_every_concurrent_finish(tmp_path):
    from io import StringIO

    from rich.console import Console

    from wikiskill.loop.progress import RichReporter

    out = StringIO()
    tasks = Doubling().tasks("train")
    with FakeOpenAIServer(answer) as server:
        meter = Meter()
        with RichReporter(Console(file=out, width=120)).tasks("r001 rollout: train", len(tasks)) as on_done:
            run_tasks(tasks, agent(server, meter), N, meter, ResultCache(tmp_path, "k"), on_done)
    final = out.getvalue().splitlines()[-1]
    assert "r001 rollout: train" in final and f"{N}/{N}" in final and "score 1.000" in final


def test_result_cache_skips_a_line_cut_short_by_a_crash(tmp_path):
    from wikiskill.store.traces import Trajectory

    done = Trajectory(task_id="t00", split="train", kind="qa", question="q", score=1.0)
    cut = Trajectory(task_id="t01", split="train", kind="qa", question="q").model_dump_json()[:-5]
    ResultCache(tmp_path, "k").put(done)
    with (tmp_path / "results" / "k" / "crashed.jsonl").open("w") as journal:
        journal.write(cut)
    cache = ResultCache(tmp_path, "k")
    assert cache.get("t00") == done and cache.get("t01") is None


@pytest.mark.slow
def test_eval_with_workers_and_no_executor_named_runs_on_a_process_pool_through_the_cli(tmp_path):
    from typer.testing import CliRunner

    from scripted import ScriptedWorld
    from wikiskill.cli import app

    world, pools = ScriptedWorld(), []

    def answer(body: dict):
        pools.append(sorted(child.name for child in multiprocessing.active_children()))
        return world(body)

    runner, ws = CliRunner(), tmp_path / "ws"
    with FakeOpenAIServer(answer) as server:
        result = runner.invoke(
            app,
            [
                "init",
                str(ws),
                "--benchmark",
                "example-qa",
                "--model",
                "openai/fake-model",
                "--api-base",
                server.base_url,
            ],
        )
        assert result.exit_code == 0, result.output
        one = runner.invoke(app, ["-C", str(ws), "eval", "--split", "test"])
        shutil.rmtree(ws / ".wikiskill" / "results")
        refused = runner.invoke(
            app, ["-C", str(ws), "eval", "--split", "test", "--workers", "2", "--executor", "local"]
        )
        two = runner.invoke(app, ["-C", str(ws), "eval", "--split", "test", "--workers", "2"])
        assert two.exit_code == 0, two.output
        assert len(server.requests) == 12  # every task asked again, once, by the workers
    assert refused.exit_code == 1 and "needs executor: processes or ray, not local" in refused.output
    assert len(refused.output.strip().splitlines()) == 1
    assert not any(name.startswith("wikiskill-worker") for names in pools[:6] for name in names)
    assert all({"wikiskill-worker-0", "wikiskill-worker-1"} <= set(names) for names in pools[6:])
    journals = list((ws / ".wikiskill" / "results").glob("*/*.jsonl"))
    assert {path.name.split("-")[0] for path in journals} == {str(os.getpid())}  # the command writes the cache
    rows = [line for line in one.output.splitlines() if "test-0" in line]
    assert len(rows) == 6 and rows == [line for line in two.output.splitlines() if "test-0" in line]


@pytest.mark.slow
def test_a_killed_worker_fails_the_step_in_one_line_and_the_next_step_gets_a_fresh_pool(tmp_path):
    import signal
    import threading

    from wikiskill.run.executors.remote import WorkerDied
    from workspaces import until

    tasks = Doubling().tasks("train")
    with FakeOpenAIServer(lambda body: Reply(content="<answer>0</answer>", delay=1.0)) as server:
        config = Config(
            benchmark=f"jsonl:{suite(tmp_path / 'suite')}", model="openai/fake-model", api_base=server.base_url
        )
        pool = ProcessPool(Place(tmp_path, tmp_path / "state"), 2, preload_litellm=True)
        failed: list[BaseException] = []

        def step() -> None:
            try:
                pool.run(AgentRecipe(config, ()), tasks, 2, Meter(), ResultCache(tmp_path, "k"))
            except WorkerDied as exc:
                failed.append(exc)

        try:
            running = threading.Thread(target=step)
            running.start()
            until(lambda: len(server.requests) >= 2, timeout=120)
            victim = pool._workers[0].process
            os.kill(victim.pid, signal.SIGKILL)
            running.join(timeout=60)
            assert not pool._workers  # the rest of the pool was ended with it
            results = pool.run(AgentRecipe(config, ()), tasks, 12, Meter(), ResultCache(tmp_path, "k"))
        finally:
            pool.close()
    assert len(failed) == 1 and str(failed[0]) == f"{victim.name} died (exit code -9)"
    assert [t.task_id for t in results] == [t.id for t in tasks]
