"""Kill `wikiskill evolve` with SIGKILL at every ref update, change the workspace by hand (a
rollback, or a hand edit), run it again until it exits, and audit every merge on main.

    python benchmarks/kill_intervene.py [--latency 0.02] [--fork-server] [--keep DIR]

The scripted world of the test suite (tests/scripted.py) is served from this process. Round 1
creates a skill that lifts val from 0.500 to 0.833; round 2 proposes one that changes nothing, so
a gate that trusted a validation made before the rollback or edit would merge it on a score it
does not have. A point is sound when the resumed run exits 0, the workspace is consistent
(`git fsck`, a clean working tree, no marker left) and `wikiskill audit --rerun` finds every
accepted merge to be an evaluation of exactly its own skills tree, against an incumbent of the
same setup, re-scoring as claimed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import kill_resume
from kill_resume import ForkServer, consistency_problems, new_workspace, reference_run, run_evolve, start_cli
from scripted import SPELL, ScriptedWorld
from wikiskill import api
from wikiskill.store.workspace import Workspace
from wikiskill.testing.fakeserver import FakeOpenAIServer


def roll_back(ws: Path) -> tuple[str, ...]:
    """Roll back round 1's skill if it is on main by now (else there is nothing to undo)."""
    subprocess.run(
        [*kill_resume.wikiskill_command(), "-C", str(ws), "rollback", "spell-letters"], capture_output=True, text=True
    )
    return ()


def hand_edit(ws: Path) -> tuple[str, ...]:
    """Edit round 1's skill if it is on main by now, else add a skill by hand; committed on resume."""
    skill = ws / "skills/spell-letters/SKILL.md"
    if skill.exists():
        skill.write_text(skill.read_text().replace(SPELL, "READ-CAREFULLY"))
    else:
        from scripted import skill_md

        skill.parent.mkdir(parents=True, exist_ok=True)
        skill.write_text(skill_md("spell-letters", "READ-CAREFULLY"))
    return ("--commit-human-edits",)


INTERVENTIONS = {"rollback": roll_back, "hand-edit": hand_edit}


def one_point(server: FakeOpenAIServer, ws: Path, trigger: str, intervene, start) -> list[str]:
    new_workspace(ws, server.base_url)
    killed = run_evolve(ws, trigger, start)
    if killed.exit_code not in (None, 0):
        return [f"the killed run exited {killed.exit_code}: {killed.stderr.strip()[-300:]}"]
    extra = intervene(ws)
    for _ in range(3):
        resumed = run_evolve(ws, None, start, extra)
        if resumed.exit_code == 0:
            break
    else:
        return [f"the resumed run exited {resumed.exit_code}: {resumed.stderr.strip()[-300:]}"]
    problems = consistency_problems(ws)
    report = api.audit(Workspace(ws), rerun=True)
    problems += report.problems
    if report.rerun != len(report.merges):
        problems.append(f"only {report.rerun} of {len(report.merges)} merges re-evaluated")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.02, help="seconds the server sleeps per request")
    parser.add_argument("--keep", type=Path, default=None, help="keep every workspace under this folder")
    parser.add_argument("--fork-server", action="store_true", help="fork runs from a process with litellm imported")
    args = parser.parse_args(argv)
    start = ForkServer() if args.fork_server else start_cli
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="kill-intervene-")) if args.keep is None else args.keep.resolve()
    root.mkdir(parents=True, exist_ok=True)
    failures = points = 0
    with FakeOpenAIServer(ScriptedWorld(), latency=args.latency) as server:
        reference = reference_run(server, root / "reference", start)
        refs = reference.counts["ref"]
        print(f"reference: {reference.seconds:.1f} s, {refs} ref updates", flush=True)
        for k in range(1, refs + 1):
            for name, intervene in INTERVENTIONS.items():
                points += 1
                ws = root / f"ref-{k:02d}-{name}"
                problems = one_point(server, ws, f"ref:{k}", intervene, start)
                print(f"kill at ref:{k:<3} then {name:<9} {'sound' if not problems else 'FAILED'}", flush=True)
                for problem in problems:
                    print(f"    {problem}  [{ws}]", flush=True)
                failures += bool(problems)
                if not problems and args.keep is None:
                    shutil.rmtree(ws, ignore_errors=True)
    if args.keep is None and not failures:
        shutil.rmtree(root, ignore_errors=True)
    print(f"kill_intervene: {points - failures}/{points} points sound (wall {time.monotonic() - started:.1f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
