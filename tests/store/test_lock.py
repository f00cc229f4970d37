"""One writer at a time: writing commands refuse while another process holds the workspace lock,
and a lock whose holder was killed is taken over."""

import signal
import subprocess
import sys

from typer.testing import CliRunner

from conftest import git
from inprocess import evolve_scripted, scripted_workspace
from wikiskill.cli import app

HOLD = """
import sys, time
from pathlib import Path
from wikiskill.store.workspace import Workspace
with Workspace(Path(sys.argv[1])).lock("wikiskill evolve"):
    print("locked", flush=True)
    time.sleep(600)
"""


def hold_lock(root) -> subprocess.Popen:
    """Another process in the middle of a writing command."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(root)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    return holder


def cli(root, *args: str):
    return CliRunner().invoke(app, ["-C", str(root), *args])


def test_writers_refuse_while_locked_and_take_over_a_dead_holders_lock(tmp_path):
    ws = scripted_workspace(tmp_path / "ws")
    evolve_scripted(ws, rounds=1)  # round 1 accepts spell-letters, so there is something to roll back
    (ws.root / "wiki/patterns/mine.md").write_text("my notes\n")
    holder = hold_lock(ws.root)
    try:
        head = ws.head()
        for command in (
            ["evolve", "--rounds", "1"],
            ["evolve", "--rounds", "1", "--commit-human-edits"],
            ["rollback", "spell-letters"],
        ):
            result = cli(ws.root, *command)
            assert result.exit_code == 1, result.output
            assert result.output.strip().splitlines() == [
                f"error: workspace is busy: pid {holder.pid} (wikiskill evolve) holds its lock; wait for it or stop it"
            ]
        assert ws.head() == head
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert holder.returncode == -signal.SIGKILL
    result = cli(ws.root, "rollback", "spell-letters")
    assert result.exit_code == 0, result.output
    assert (ws.state_dir / "lock").read_text().endswith("(wikiskill rollback)")
    steps = git(ws.root, "log", "-1", "--format=%(trailers:key=Wikiskill-Step,valueonly)", "main").strip()
    assert steps == "rollback"
