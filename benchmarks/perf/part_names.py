"""Looking up a kind's names, as settings do at every turn (`agent.kind`, `agent.runner`,
`gate.policy`, a suite's scorer): the entry points read from every installed distribution's
metadata on each call, against `PartKind.names()`, which keeps them per state of sys.path.

    python benchmarks/perf/part_names.py [--calls 200]

Both run side by side in this process over the same installed packages; the ratio is the figure.
"""

from __future__ import annotations

import argparse
from importlib.metadata import distributions, entry_points

from _common import median_time, table
from wikiskill.core.parts import TASK_AGENT


def read_every_time() -> list[str]:
    return [*TASK_AGENT.builtins, *sorted(point.name for point in entry_points(group=TASK_AGENT.group))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    assert read_every_time() == TASK_AGENT.names()
    rows = []
    for label, look_up in (("entry points read on each call", read_every_time), ("PartKind.names()", TASK_AGENT.names)):
        seconds = median_time(lambda look_up=look_up: [look_up() for _ in range(args.calls)])
        rows.append([label, seconds / args.calls * 1e6])
    rows = [[*row, rows[0][1] / row[1]] for row in rows]
    print(f"{sum(1 for _ in distributions())} installed distributions, {args.calls} look-ups of the task agents' names")
    print(table(["look-up", "us per call", "speed-up"], rows))


if __name__ == "__main__":
    main()
