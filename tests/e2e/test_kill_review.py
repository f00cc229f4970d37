"""`kill -9` of a real `wikiskill accept` and `wikiskill reject` at the git calls that publish
their writes (a git shim on the run's PATH kills the command's process group just before or just
after the n-th call of a kind, see benchmarks/kill_gate.py), then the same command again: it exits
0 and leaves the workspace as an uninterrupted run does (history, tags, branches, a clean tree
and `git fsck`, no sync marker), and `audit` finds every merge sound."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import kill_gate  # noqa: E402
import kill_resume  # noqa: E402
from inprocess import WorldModel, evolve_scripted, scripted_workspace  # noqa: E402
from scripted import ScriptedWorld  # noqa: E402
from wikiskill import api  # noqa: E402
from wikiskill.api import RunOptions  # noqa: E402
from wikiskill.store.workspace import Workspace  # noqa: E402
from workspaces import edit_config  # noqa: E402

pytestmark = pytest.mark.slow

WHY = "spelling out every word doubles the answer length"
COMMANDS = {"accept": ["accept", "spell-letters"], "reject": ["reject", "spell-letters", "--why", WHY]}
POINTS = {  # (command, before/after, the call's key begins with, which of those calls: -1 the last)
    "accept, after its merge moves main": ("accept", "after", "update-ref refs/heads/main ", -1),
    "accept, before the merge's working-tree sync": ("accept", "before", "read-tree --reset -u ", -1),
    "accept, after main is merged into the pending branch": ("accept", "after", "update-ref refs/heads/pending/", 0),
    "accept, after the pending branch is deleted": ("accept", "after", "update-ref -d refs/heads/pending/", 0),
    "reject, after the rejected tag": ("reject", "after", "tag -f rejected/", 0),
    "reject, before the pending branch is deleted": ("reject", "before", "update-ref -d refs/heads/pending/", 0),
    # between its two writes whichever comes first: its commit on main and the pending branch's deletion
    "reject, after its commit moves main": ("reject", "after", "update-ref refs/heads/main ", 0),
    "reject, after the pending branch is deleted": ("reject", "after", "update-ref -d refs/heads/pending/", 0),
}


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """A workspace whose two rounds under human review left spell-letters pending, the git shim,
    and per command the calls and the end state of an uninterrupted run."""
    root = tmp_path_factory.mktemp("kill-review")
    ws = scripted_workspace(root / "queued")
    edit_config(ws, **{"gate.review": "human"})
    subprocess.run(["git", "-C", str(ws.root), "commit", "-qam", "review by a person"], check=True)
    model = WorldModel(ScriptedWorld())
    evolve_scripted(ws, rounds=2)
    shim = kill_gate.GitShim(root / "shim")
    references = {}
    for name, argv in COMMANDS.items():
        copy = copied(ws.root, root / f"reference-{name}")
        shim.reset()
        assert run(copy, argv, shim)[0] == 0
        references[name] = shim.calls(), kill_resume.signature(copy)
    return ws.root, shim, references, lambda role: model


def copied(source: Path, dest: Path) -> Path:
    shutil.copytree(source, dest, symlinks=True)
    return dest


FORKS = kill_gate.ShimForkServer()
"""Starts each command forked from a process that imported litellm once, in a session of its own
(the shim kills the command's process group, not this one)."""


def run(ws: Path, argv: list[str], shim: kill_gate.GitShim | None = None) -> tuple[int, str]:
    """The command's exit code (-9: killed) and what it printed."""
    output = ws.parent / f".{ws.name}-{argv[0]}"
    path = shim.path() if shim is not None else os.environ.get("PATH", "")
    process = FORKS.context.Process(
        target=kill_gate._forked_cli_on_path, args=(["-C", str(ws), *argv], str(output), path)
    )
    process.start()
    process.join(timeout=120)
    printed = "".join(Path(f"{output}{suffix}").read_text() for suffix in (".out", ".err"))
    return process.exitcode, printed


@pytest.mark.parametrize("name", POINTS)
def test_a_decision_killed_at_a_git_call_ends_as_an_uninterrupted_one_when_run_again(prepared, tmp_path, name):
    source, shim, references, model_factory = prepared
    command, when, prefix, which = POINTS[name]
    calls, expected = references[command]
    index = [index for index, key in enumerate(calls) if key.startswith(prefix)][which]
    shim.reset(kill_gate.KillPoint(when, calls[: index + 1].count(calls[index]), calls[index]))
    ws = copied(source, tmp_path / "ws")
    killed, printed = run(ws, COMMANDS[command], shim)
    assert killed == -9, printed  # the kill landed
    again, printed = run(ws, COMMANDS[command])
    assert again == 0, printed
    assert kill_resume.signature(ws) == expected
    assert kill_resume.consistency_problems(ws) == []
    assert api.audit(Workspace(ws), options=RunOptions(model_factory=model_factory)).problems == []
