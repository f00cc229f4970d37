"""Generating textworld-cooking games into a fresh, throw-away cache: in the command's own process
against a pool of generator processes, side by side for each number of games.

    python benchmarks/perf/textworld_generation.py [N ...]   # numbers of games, default 2 3 4 8

Each measurement is a fresh command (`python -c`), so both ways pay their imports and TextWorld's
knowledge-base load as a real first run does. CPU counts the command and every process it started
(generator workers, the Inform 7 compiler). `POOL_MIN_GAMES` picks the way for a real run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from wikiskill.benchmarks.textworld_games import GENERATION_WORKERS, POOL_MIN_GAMES  # noqa: E402

_MEASURE = """
import json, os, sys, time
start, before = time.perf_counter(), os.times()
from wikiskill.benchmarks import textworld_games
from wikiskill.benchmarks.textworld_cooking import SEED_BASES, ensure_games
textworld_games.POOL_MIN_GAMES = int(sys.argv[2])
ensure_games([SEED_BASES["train"] + i for i in range(int(sys.argv[1]))])
after = os.times()
cpu = sum(getattr(after, f) - getattr(before, f) for f in ("user", "system", "children_user", "children_system"))
print(json.dumps({"wall": time.perf_counter() - start, "cpu": cpu}))
"""


def measure(games: int, pool_from: int) -> dict[str, float]:
    """One fresh command generating `games` games, with a pool from `pool_from` missing games on."""
    with tempfile.TemporaryDirectory(prefix="wikiskill-twgen-") as cache:
        done = subprocess.run(
            [sys.executable, "-c", _MEASURE, str(games), str(pool_from)],
            env={**os.environ, "WIKISKILL_CACHE_DIR": cache},
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
    figures: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*", type=int, default=[2, 3, 4, 8], help="numbers of games")
    counts = parser.parse_args().games
    print(f"pool of up to {GENERATION_WORKERS} workers; a real run uses it from {POOL_MIN_GAMES} missing games on")
    columns = ("games", "here wall", "pool wall", "ratio", "here CPU", "pool CPU", "ratio")
    print("  ".join(f"{name:>{max(5, len(name))}}" for name in columns))
    for games in counts:
        here = measure(games, pool_from=games + 1)
        pool = measure(games, pool_from=1)
        print(
            f"{games:>5}  {here['wall']:8.1f}s  {pool['wall']:8.1f}s  {pool['wall'] / here['wall']:5.2f}"
            f"  {here['cpu']:7.1f}s  {pool['cpu']:7.1f}s  {pool['cpu'] / here['cpu']:5.2f}"
        )


if __name__ == "__main__":
    main()
