"""Kill `wikiskill evolve` with SIGKILL at every git call that a round's gate and end make, then
run `wikiskill evolve --rounds K` for the K rounds still missing: it must finish as an
uninterrupted plain `wikiskill evolve` does.

    python benchmarks/kill_gate.py [--when before after] [--scenario accept-reject perfect]
                                   [--fork-server] [--keep DIR] [--rerun]

A git shim on the run's PATH (GitShim) logs each git call by its key (its arguments, commit ids
blanked) and SIGKILLs the run's process group just before or just after the n-th call of a key.
Each scenario's uninterrupted reference run gives the kill points: every call from the one after
the last publish before the gate's (the validation on the candidate branch, or the maintainer's
commit when no candidate was validated) to the round's `gc --auto` after its tag, and for the
run's last round to the run's end. Scenarios, in the scripted world of tests/scripted.py:

  accept-reject  round 1 accepted (val 0.500 -> 0.833), round 2 rejected, round 3 no action
  perfect        round 1 accepted at val 1.000, which ends the run

A point passes when the killed run died at its call, the next `wikiskill evolve` (no hand repair;
none when every round was tagged) exits 0, and the workspace then has the reference's history,
tags and branches (kill_resume.signature), a clean `git status` and `git fsck`, no sync marker, no task
computed twice, and `wikiskill audit` finds every merge sound.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import kill_resume
from kill_resume import (
    ForkServer,
    _forked_cli,
    _ForkedProcess,
    cached_results,
    consistency_problems,
    new_workspace,
    signature,
)
from scripted import SPELL, ScriptedWorld, true_answer
from wikiskill import api
from wikiskill.store.workspace import Workspace
from wikiskill.testing.fakeserver import FakeOpenAIServer

EVOLVE = ("evolve",)  # plain: the default number of rounds, no flag
DEFAULT_ROUNDS = 3  # what a plain `evolve` runs
WHEN = ("before", "after")

SHIM = """#!/bin/sh
# git, counted: each call's key is logged; the call named in ./kill (when, n, key) SIGKILLs the
# caller's process group just before or just after it runs. A call of another key is only logged
# (one short line, appended whole); the armed key's calls are logged and counted under a lock.
key=$(printf '%s ' "$@" | tr '\\n' ' ' | sed -E 's/[0-9a-f]{40}/<id>/g; s/ $//')
when= ; kill_n= ; kill_key=
[ -f "SHIM_DIR/kill" ] && IFS='	' read -r when kill_n kill_key < "SHIM_DIR/kill"
if [ "$key" != "$kill_key" ]; then
    printf '%s\\n' "$key" >> "SHIM_DIR/calls"
    exec "REAL_GIT" "$@"
fi
exec 9>>"SHIM_DIR/lock"
flock 9
printf '%s\\n' "$key" >> "SHIM_DIR/calls"
n=$(grep -cxF -- "$key" "SHIM_DIR/calls")
flock -u 9
exec 9>&-
if [ "$n" = "$kill_n" ]; then
    [ "$when" = before ] && kill -KILL 0
    "REAL_GIT" "$@"
    kill -KILL 0
fi
exec "REAL_GIT" "$@"
"""


class GitShim:
    """A `git` on a folder to put first on a run's PATH; it passes every call to the real git."""

    def __init__(self, folder: Path):
        self.folder = folder.resolve()
        self.folder.mkdir(parents=True, exist_ok=True)
        real = shutil.which("git")
        if real is None or shutil.which("flock") is None:
            raise RuntimeError("the git shim needs git and flock (util-linux) on PATH")
        script = self.folder / "git"
        script.write_text(SHIM.replace("SHIM_DIR", str(self.folder)).replace("REAL_GIT", real), encoding="utf-8")
        script.chmod(0o755)
        self.reset()

    def reset(self, kill: KillPoint | None = None) -> None:
        """Forget the calls logged so far and arm (or disarm) the kill for the next run."""
        (self.folder / "calls").write_text("", encoding="utf-8")
        armed = self.folder / "kill"
        if kill is None:
            armed.unlink(missing_ok=True)
        else:
            armed.write_text(f"{kill.when}\t{kill.n}\t{kill.key}\n", encoding="utf-8")

    def calls(self) -> list[str]:
        return (self.folder / "calls").read_text(encoding="utf-8").splitlines()

    def path(self) -> str:
        return f"{self.folder}{os.pathsep}{os.environ.get('PATH', '')}"


@dataclass(frozen=True)
class KillPoint:
    when: str  # "before" or "after" the call runs
    n: int  # the n-th call with this key in the run
    key: str

    def __str__(self) -> str:
        return f"{self.when} {self.key[:70]} #{self.n}"


ROUND_TAG = re.compile(r"^tag -f round/\d{3} <id>$")
PUBLISH = re.compile(r"^update-ref refs/heads/\S+ <id> <id>$")  # a compare-and-swap of an existing branch


def gate_windows(calls: list[str]) -> list[range]:
    """For each round of a run's calls: the indexes from the gate's first call to the round's end
    (its `gc --auto` after the round tag; for the last round, the run's end)."""
    tags = [index for index, key in enumerate(calls) if ROUND_TAG.match(key)]
    windows = []
    for number, tag in enumerate(tags):
        gate = max(index for index in range(tag) if calls[index].startswith("update-ref refs/heads/main "))
        start = max(index for index in range(gate) if PUBLISH.match(calls[index])) + 1
        end = (
            len(calls) - 1
            if number == len(tags) - 1
            else next(index for index in range(tag, len(calls)) if calls[index].startswith("gc --auto"))
        )
        windows.append(range(start, end + 1))
    return windows


def kill_points(calls: list[str], when: tuple[str, ...] = WHEN) -> list[KillPoint]:
    points = []
    for window in gate_windows(calls):
        for index in window:
            n = calls[: index + 1].count(calls[index])
            points += [KillPoint(moment, n, calls[index]) for moment in when]
    return points


# -- scenarios --------------------------------------------------------------------------------------


class PerfectWorld(ScriptedWorld):
    """The scripted world where the spelling skill fixes every reversal: round 1 reaches 1.000."""

    def answer(self, system: str, question: str) -> str:
        if SPELL in system:
            return f"Let me spell it. <answer>{true_answer(question)}</answer>"
        return super().answer(system, question)


SCENARIOS = {"accept-reject": ScriptedWorld, "perfect": PerfectWorld}


# -- running ------------------------------------------------------------------------------------------


def _forked_cli_on_path(argv: list[str], output: str, path: str) -> None:
    os.environ["PATH"] = path
    _forked_cli(argv, output)


class Starter:
    """Starts `wikiskill -C WS evolve` with the shim first on its PATH, as a subprocess or forked
    from a process that has already imported litellm (kill_resume.ForkServer)."""

    def __init__(self, shim: GitShim, fork_server: bool):
        self.shim = shim
        self.fork = ShimForkServer() if fork_server else None

    def __call__(self, ws: Path, output: Path, *extra: str):
        argv = ["-C", str(ws), *EVOLVE, *extra]
        if self.fork is not None:
            process = self.fork.context.Process(target=_forked_cli_on_path, args=(argv, str(output), self.shim.path()))
            process.start()
            return _ForkedProcess(process)
        with open(f"{output}.out", "wb") as out, open(f"{output}.err", "wb") as err:
            return subprocess.Popen(
                [*kill_resume.wikiskill_command(), *argv],
                stdout=out,
                stderr=err,
                start_new_session=True,
                env={**os.environ, "PATH": self.shim.path()},
            )


class ShimForkServer(ForkServer):
    PRELOAD = [*ForkServer.PRELOAD, "kill_gate"]


@dataclass
class Reference:
    signature: dict
    calls: list[str]
    decisions: list[str]


def reference_run(server: FakeOpenAIServer, ws: Path, start: Starter) -> Reference:
    start.shim.reset()
    run = kill_resume.run_evolve(new_workspace(ws, server.base_url), start=start)
    if run.exit_code != 0:
        raise RuntimeError(f"the reference run failed:\n{run.stderr}")
    problems = consistency_problems(ws) + audit_problems(ws)
    if problems:
        raise RuntimeError(f"the reference run is inconsistent: {problems}")
    return Reference(signature(ws), start.shim.calls(), decisions(ws))


def decisions(ws: Path) -> list[str]:
    return kill_resume.git(
        ws, "log", "--first-parent", "--reverse", "--format=%(trailers:key=Wikiskill-Decision,valueonly)", "main"
    ).split()


def audit_problems(ws: Path, rerun: bool = False) -> list[str]:
    report = api.audit(Workspace(ws), rerun=rerun)
    problems = [f"audit: {problem}" for problem in report.problems]
    if rerun and report.rerun != len(report.merges):
        problems.append(f"audit re-evaluated only {report.rerun} of {len(report.merges)} merges")
    return problems


def kill_and_resume(
    server: FakeOpenAIServer, ws: Path, reference: Reference, point: KillPoint, start: Starter, rerun: bool = False
) -> list[str]:
    """Run until the shim kills at `point`, then once more unarmed for the rounds still missing;
    what is wrong afterwards."""
    new_workspace(ws, server.base_url)
    start.shim.reset(point)
    killed = kill_resume.run_evolve(ws, start=start)
    if killed.exit_code != -signal.SIGKILL:
        return [f"the run was not killed at {point} (exit {killed.exit_code}): {killed.stderr.strip()[-300:]}"]
    start.shim.reset()
    left = kill_resume.rounds_left(ws, DEFAULT_ROUNDS)
    if left:  # none: killed after the run's last tag, when it had finished
        resumed = kill_resume.run_evolve(ws, start=start, extra=("--rounds", str(left)))
        if resumed.exit_code != 0:
            return [f"the resumed run exited {resumed.exit_code}: {resumed.stderr.strip()[-500:]}"]
    problems = consistency_problems(ws)
    twice = sorted(task for task, count in cached_results(ws).items() if count > 1)
    if twice:
        problems.append(f"{len(twice)} finished task(s) computed again, e.g. {twice[0]}")
    history = signature(ws)
    for key, expected in reference.signature.items():
        actual = history[key]
        if actual != expected:
            problems.append(
                f"history differs in {key}: expected {kill_resume._short(expected)}, got {kill_resume._short(actual)}"
            )
    return problems + audit_problems(ws, rerun)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--when", nargs="+", choices=WHEN, default=list(WHEN), help="kill before and/or after a call")
    parser.add_argument("--scenario", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--fork-server", action="store_true", help="fork runs from a process with litellm imported")
    parser.add_argument("--rerun", action="store_true", help="audit --rerun: re-evaluate every merge")
    parser.add_argument("--keep", type=Path, default=None, help="keep every workspace under this folder")
    args = parser.parse_args(argv)
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="kill-gate-")) if args.keep is None else args.keep.resolve()
    root.mkdir(parents=True, exist_ok=True)
    start = Starter(GitShim(root / "shim"), args.fork_server)
    total = failures = 0
    for scenario in args.scenario:
        with FakeOpenAIServer(SCENARIOS[scenario]()) as server:
            reference = reference_run(server, root / scenario / "reference", start)
            points = kill_points(reference.calls, tuple(args.when))
            print(
                f"{scenario}: decisions {' '.join(reference.decisions)}, {len(reference.calls)} git calls, "
                f"{len(points)} kill points",
                flush=True,
            )
            for number, point in enumerate(points, 1):
                ws = root / scenario / f"point-{number:03d}"
                problems = kill_and_resume(server, ws, reference, point, start, args.rerun)
                print(f"  {number:3d} kill {str(point):<84} {'ok' if not problems else 'FAILED'}", flush=True)
                for problem in problems:
                    print(f"      {problem}  [{ws}]", flush=True)
                total += 1
                failures += bool(problems)
                if not problems and args.keep is None:
                    shutil.rmtree(ws, ignore_errors=True)
    if args.keep is None and not failures:
        shutil.rmtree(root, ignore_errors=True)
    print(
        f"kill_gate: {total - failures}/{total} kill points resumed cleanly (wall {time.monotonic() - started:.1f} s)"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
