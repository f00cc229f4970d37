"""Real processes, really interrupted: Ctrl-C while games are generated leaves no partial file and
writes nothing after it; `kill -9` of the main process leaves none of its worker processes behind."""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply
from workspaces import until

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads processes from /proc")


def stat(pid: int) -> list[str] | None:
    """state, ppid, pgrp, session, ... of a process, or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return text[text.rindex(")") + 2:].split()


def alive(pid: int) -> bool:
    fields = stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")  # a zombie has ended, only not yet reaped


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


def test_ctrl_c_while_games_are_generated_stops_the_workers_and_leaves_no_partial_file(tmp_path):
    cache = tmp_path / "cache"
    main = script(tmp_path, """
        from wikiskill.benchmarks.textworld_cooking import ensure_games

        if __name__ == "__main__":
            ensure_games(list(range(1000, 1008)))
    """)
    run = subprocess.Popen([sys.executable, str(main)], env={**os.environ, "WIKISKILL_CACHE_DIR": str(cache)},
                           start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers: set[int] = set()
    try:
        games = until(lambda: next(cache.glob("textworld-cooking/*/"), None) if any(cache.glob("*/*/.tmp-*")) else None,
                      timeout=120)
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
    assert stories == sidecars and len(stories) < 8  # and no process is left to write another


def test_kill_9_of_the_main_process_ends_its_worker_processes(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    for split in ("train", "val", "test"):
        (suite / f"{split}.jsonl").write_text('{"id": "t", "question": "q", "answer": "a"}\n')
    main = script(tmp_path, """
        import sys
        from pathlib import Path

        from wikiskill.benchmarks import Task
        from wikiskill.config import Config
        from wikiskill.llm import Meter
        from wikiskill.runner import AgentRecipe, run_in_workers

        if __name__ == "__main__":
            suite, base_url = Path(sys.argv[1]), sys.argv[2]
            config = Config(benchmark=f"jsonl:{suite}", model="openai/fake-model", api_base=base_url)
            tasks = [Task(id=f"t{i}", split="train", question=f"question {i}", answer="a") for i in range(4)]
            run_in_workers(tasks, AgentRecipe(suite, suite / "state", config, ()), 2, 2, Meter())
    """)
    with FakeOpenAIServer(lambda body: Reply(content="<answer>a</answer>", delay=600)) as server:
        run = subprocess.Popen([sys.executable, str(main), str(suite), server.base_url],
                               env={**os.environ, "OPENAI_API_KEY": "sk-test"}, start_new_session=True)
        workers: set[int] = set()
        try:
            until(lambda: len(server.requests) >= 2, timeout=120)  # both workers are waiting on a model call
            workers = descendants(run.pid)
            assert len(workers) >= 2
            os.kill(run.pid, signal.SIGKILL)
            run.wait(timeout=30)
            until(lambda: not any(alive(pid) for pid in workers), timeout=30)
        finally:
            for pid in descendants(run.pid) | workers | {run.pid}:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)
