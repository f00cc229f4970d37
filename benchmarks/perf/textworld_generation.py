"""Time generating textworld-cooking games into a fresh, throw-away cache.

    /work/venv/bin/python benchmarks/perf/textworld_generation.py [N]   # N games, default 8

Wall time includes starting the worker processes (import + TextWorld knowledge-base load).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from wikiskill.benchmarks.textworld_cooking import (  # noqa: E402
    GENERATION_SETTINGS,
    GENERATION_WORKERS,
    SEED_BASES,
    ensure_games,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=8, help="number of games (default 8)")
    n = parser.parse_args().n

    workers = min(GENERATION_WORKERS, os.cpu_count() or 1, n)
    print(f"settings: {GENERATION_SETTINGS}")
    print(f"generating {n} games with {workers} worker process(es)")
    with tempfile.TemporaryDirectory(prefix="wikiskill-twgen-") as cache:
        os.environ["WIKISKILL_CACHE_DIR"] = cache
        start = time.perf_counter()
        ensure_games(
            [SEED_BASES["train"] + i for i in range(n)],
            progress=lambda done, total: print(f"  {done}/{total} at {time.perf_counter() - start:6.1f} s"),
        )
        total = time.perf_counter() - start
    print(f"total {total:.1f} s, {total / n:.2f} s per game (wall)")


if __name__ == "__main__":
    main()
