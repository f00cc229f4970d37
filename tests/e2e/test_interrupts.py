"""Real processes, really interrupted: Ctrl-C while games are generated leaves no partial file and
writes nothing after it; `kill -9` of a command mid-rollout leaves none of its worker processes
behind (a process pool's, or a local Ray's), and its resume recomputes no finished task."""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from processes import alive, stat
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply
from workspaces import hears_ctrl_c, until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads processes from /proc"),
]


def descendants(pid: int) -> set[int]:
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := stat(int(entry.name))) is not None:
            parents[int(entry.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def script(tmp_path: Path, text: str) -> Path:
    """A main module on disk: `spawn` and `forkserver` children re-import it by path."""
    path = tmp_path / "main.py"
    path.write_text(textwrap.dedent(text))
    return path


GAMES = 32
"""Far more than get generated before the first write is seen, even on a busy machine, so Ctrl-C
always lands while games are still being made."""


def test_ctrl_c_while_games_are_generated_stops_the_workers_and_leaves_no_partial_file(tmp_path):
    cache = tmp_path / "cache"
    main = script(
        tmp_path,
        """
        import sys

        from wikiskill.benchmarks.textworld_cooking import ensure_games

        if __name__ == "__main__":
            ensure_games(list(range(1000, 1000 + int(sys.argv[1]))))
    """,
    )
    run = subprocess.Popen(
        [sys.executable, str(main), str(GAMES)],
        env={**os.environ, "WIKISKILL_CACHE_DIR": str(cache)},
        start_new_session=True,
        preexec_fn=hears_ctrl_c,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    workers: set[int] = set()
    try:
        games = until(
            lambda: next(cache.glob("textworld-cooking/*/"), None) if any(cache.glob("*/*/.tmp-*")) else None,
            timeout=120,
        )
        workers = descendants(run.pid)
        os.killpg(run.pid, signal.SIGINT)  # what the terminal does on Ctrl-C: the whole foreground group
        _, err = run.communicate(timeout=60)
        until(lambda: not any(alive(pid) for pid in workers), timeout=30)
    finally:
        for pid in descendants(run.pid) | workers | {run.pid}:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert run.returncode != 0 and "KeyboardInterrupt" in err
    left = sorted(path.name for path in games.iterdir())
    assert not [name for name in left if name.startswith(".tmp-")]
    stories, sidecars = {n[:-3] for n in left if n.endswith(".z8")}, {n[:-5] for n in left if n.endswith(".json")}
    assert stories == sidecars and len(stories) < GAMES  # and no process is left to write another


SLOW = ("test-01", "test-04")
"""example-qa test tasks whose model call never returns while the command is killed."""


def test_kill_9_of_a_command_leaves_no_worker_behind_and_its_resume_recomputes_no_finished_task(tmp_path, executor):
    from scripted import ScriptedWorld
    from wikiskill import api
    from wikiskill.benchmarks import load_benchmark
    from wikiskill.core.config import Config

    ws_path = tmp_path / "ws"
    main = script(
        tmp_path,
        """
        import sys
        from pathlib import Path

        from wikiskill import api
        from wikiskill.api import RunOptions

        if __name__ == "__main__":
            ws = api.open_workspace(Path(sys.argv[1]))
            api.evaluate(ws, "test", options=RunOptions(executor=sys.argv[2], workers=2, concurrency=6))
    """,
    )
    world = ScriptedWorld()
    questions = {task.question: task.id for task in load_benchmark(Config(benchmark="example-qa")).tasks("test")}
    asked: list[str] = []
    stalling = [True]

    def stalls_on_slow_tasks(body: dict):
        task = questions[body["messages"][-1]["content"]]
        asked.append(task)
        return Reply(content="", delay=600) if stalling[0] and task in SLOW else world(body)

    with FakeOpenAIServer(stalls_on_slow_tasks) as server:
        ws = api.init_workspace(ws_path, "example-qa", "openai/fake-model", server.base_url)
        journals = ws.state_dir / "results"
        run = subprocess.Popen(
            [sys.executable, str(main), str(ws_path), executor],
            env={**os.environ, "OPENAI_API_KEY": "sk-test"},
            start_new_session=True,
        )
        workers: set[int] = set()
        try:
            until(
                lambda: (
                    run.poll() is not None or (set(SLOW) <= set(asked) and finished_lines(journals) == 6 - len(SLOW))
                ),
                timeout=240,
            )
            assert run.poll() is None, "the command ended before it was killed"
            workers = descendants(run.pid)
            assert workers
            os.kill(run.pid, signal.SIGKILL)
            run.wait(timeout=30)
            until(lambda: not any(alive(pid) for pid in workers), timeout=30)
        finally:
            for pid in descendants(run.pid) | workers | {run.pid}:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)
        first = list(asked)
        asked.clear()
        stalling[0] = False
        resumed = api.evaluate(api.open_workspace(ws_path), "test")
    assert sorted(first) == sorted(questions.values())
    assert sorted(asked) == sorted(SLOW)  # the four finished tasks were not asked again
    assert len(resumed.evaluation.scores) == 6


def finished_lines(journals: Path) -> int:
    return sum(len(path.read_text().splitlines()) for path in journals.glob("*/*.jsonl"))


@pytest.fixture(params=["processes", "ray"])
def executor(request) -> str:
    return request.param
