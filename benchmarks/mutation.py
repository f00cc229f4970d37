"""Mutation testing of the modules whose mistakes pass silently: the gate's rules and alpha budget,
`audit`, review, rollback, test looks, `uplift` and its statistics, held-out text, the roles'
sandbox, edits and stuck detection, the task environments and their network, Harbor tasks and
rewards, soundness and the trackers' endpoint check.

mutmut (the test extra) changes one operator, constant or call at a time and runs, for each such
mutant, the fast tests (`[tool.mutmut]` in pyproject.toml) that cover the function it changed;
a mutant those tests all pass on has survived. This runs it on the modules named (all of them by
default) and prints each one's kill rate, the table in docs/development.md#mutation-testing.
Results are kept in mutants/; a module named is tested again whole, `--again` tests only its
mutants not killed yet (after tests were written for them).

    nice -n 15 .venv/bin/python benchmarks/mutation.py                          # every module
    nice -n 15 .venv/bin/python benchmarks/mutation.py loop.review              # one or more
    nice -n 15 .venv/bin/python benchmarks/mutation.py --again loop.review      # those not killed yet
    .venv/bin/mutmut results                                                    # the survivors by name
    .venv/bin/mutmut show <name>                                                # what one of them changed
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULES = (
    "loop.gate_policies",
    "loop.cost_gate",
    "loop.sequential",
    "loop.review",
    "loop.steps.gate",
    "history.audit",
    "history.rollback",
    "roles.sandbox",
    "environments",
    "run.harbor_tasks",
    "loop.alpha_budget",
    "knowledge.leakage",
    "history.uplift",
    "history.uplift_stats",
    "history.differences",
    "roles.edit_blocks",
    "roles.file_edits",
    "roles.stuck",
    "run.harbor_reward",
    "environments.network",
    "run.soundness",
    "run.crash_rule",
    "run.folder_check",
    "core.endpoints",
    "history.test_looks",
)
"""`[tool.mutmut] only_mutate` names the same files; `environments.network` is also part of
`environments`, counted in the row of the narrower name when both are tabled."""
DETECTED = {"killed", "timeout", "caught by type check", "segfault"}
"""A mutant the tests stopped: failed, hung or crashed on."""


def mutmut(*args: str, shown: bool = False) -> str:
    """mutmut in the repository root, importing the mutated copy it makes in mutants/, never
    this checkout (so no PYTHONPATH pointing here); what it prints, unless `shown` as it goes."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    command = [str(Path(sys.executable).with_name("mutmut")), *args]
    done = subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=not shown, text=True)
    return done.stdout or ""


def results(modules: list[str]) -> dict[str, str]:
    """Each mutant of the modules and the status its last run left (`not checked` before any)."""
    found = {}
    for line in mutmut("results", "--all", "true").splitlines():
        name, _, status = line.strip().rpartition(": ")
        if any(name.startswith(f"wikiskill.{module}.") for module in modules):
            found[name] = status
    return found


def statuses(modules: list[str]) -> dict[str, Counter[str]]:
    """Per module, how many of its mutants ended in each status."""
    counts: dict[str, Counter[str]] = {module: Counter() for module in modules}
    for name, status in results(modules).items():
        owners = [module for module in modules if name.startswith(f"wikiskill.{module}.")]
        counts[max(owners, key=len)][status] += 1
    return counts


def table(counts: dict[str, Counter[str]]) -> str:
    """Each module's mutants, those tested (not `not checked`), killed, and killed over tested."""
    rows = [
        "| module | mutants | tested | killed | survived | no tests | kill rate |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for module, count in counts.items():
        total, detected = sum(count.values()), sum(count[status] for status in DETECTED)
        tested = total - count["not checked"]
        rate = f"{detected / tested:.0%}" if tested else "-"
        rows.append(
            f"| {module} | {total} | {tested} | {detected} | {count['survived']} | {count['no tests']} | {rate} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help=f"modules under wikiskill/ (default: all): {', '.join(MODULES)}")
    parser.add_argument("--jobs", type=int, default=2, help="mutants tested at once")
    parser.add_argument(
        "--again", action="store_true", help="test only the mutants not killed yet (after writing tests for them)"
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.modules) - set(MODULES))
    if unknown:
        parser.error(f"not a module this runs on: {', '.join(unknown)} (one of {', '.join(MODULES)})")
    modules = args.modules or list(MODULES)
    # mutmut tests every mutant it is given by name again, killed or not
    names = [f"wikiskill.{module}.*" for module in modules]
    if args.again:
        names = [name for name, status in results(modules).items() if status not in DETECTED]
    if names:
        mutmut("run", "--max-children", str(args.jobs), *names, shown=True)
    print(table(statuses(modules)))


if __name__ == "__main__":
    main()
