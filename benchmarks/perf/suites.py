"""Seconds per task for every benchmark suite that can be measured without an LLM.

    python benchmarks/perf/suites.py [NAME ...] [--tasks N]

Without names: every registered family whose requirements are installed, each family that needs
an argument through its spec's `examples`. Each suite runs in its own process with an empty
$WIKISKILL_CACHE_DIR, so its imports and any generation are paid cold:

- setup s/task: loading the suite and preparing N tasks of each split, over the tasks made;
- episode s: one episode of the known-good policy (an interactive suite's `reference_actions`,
  a tool-use suite's `reference_calls`, a QA suite's `Task.answer` put to its scorer), averaged over
  the train tasks, with the mean score it earned (1.0 when the adapter scores correctly). "—" where the suite has none.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from wikiskill.benchmarks import SPLITS, list_families, load_benchmark  # noqa: E402
from wikiskill.benchmarks.reference import play_reference  # noqa: E402
from wikiskill.core.config import Config, SplitSizes  # noqa: E402


def default_names() -> tuple[list[str], list[str]]:
    """The names to measure, and a line for each family left out."""
    names, skipped = [], []
    for row in list_families():
        if row.spec is None or row.missing:
            skipped.append(f"{row.name}: {row.error or 'missing ' + ', '.join(row.missing)}")
        elif row.spec.argument_required and not row.spec.examples:
            skipped.append(f"{row.name}: needs an argument and its spec names no examples")
        elif row.spec.argument_required:
            names += row.spec.examples
        else:
            names.append(row.name)
    return names, skipped


def measure(name: str, count: int) -> dict:
    """Run in a child process: setup and reference-episode seconds for one suite."""
    start = time.perf_counter()  # checking the name imports the suite's package
    config = Config(benchmark=name, splits=SplitSizes(train=count, val=count, test=count))
    bench = load_benchmark(config, Path.cwd())
    bench.prepare(SPLITS)
    made = [task for split in SPLITS for task in bench.tasks(split)]
    setup = (time.perf_counter() - start) / len(made)
    episodes, scores = [], []
    for task in bench.tasks("train"):
        start = time.perf_counter()
        score = play_reference(bench, task)
        if score is None:
            continue
        episodes.append(time.perf_counter() - start)
        scores.append(score)
    return {
        "name": name,
        "kind": bench.spec.kind.value,
        "tasks": len(made),
        "setup": setup,
        "episode": sum(episodes) / len(episodes) if episodes else None,
        "score": sum(scores) / len(scores) if scores else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="suites to measure (default: every measurable one)")
    parser.add_argument("--tasks", type=int, default=2, help="tasks per split (default 2)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.tasks)))
        return
    names, skipped = (args.names, []) if args.names else default_names()
    print(f"{'suite':<48} {'kind':<12} {'tasks':>5} {'setup s/task':>12} {'episode s':>10} {'ref score':>9}")
    for name in names:
        with tempfile.TemporaryDirectory(prefix="wikiskill-suites-") as cache:
            done = subprocess.run(
                [sys.executable, __file__, "--one", name, "--tasks", str(args.tasks)],
                env={**os.environ, "WIKISKILL_CACHE_DIR": cache},
                capture_output=True,
                text=True,
            )
        if done.returncode != 0:
            reason = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode
            print(f"{name:<48} failed: {reason}")
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        episode = "—" if row["episode"] is None else f"{row['episode']:.4f}"
        score = "—" if row["score"] is None else f"{row['score']:.2f}"
        print(f"{name:<48} {row['kind']:<12} {row['tasks']:>5} {row['setup']:>12.4f} {episode:>10} {score:>9}")
    for line in skipped:
        print(f"skipped {line}")


if __name__ == "__main__":
    main()
