"""How long Ctrl-C takes to stop game generation, and what it leaves in the cache.

    python benchmarks/perf/interrupt.py [--games N] [--tries T]

Each try generates N games into a fresh cache in a child process, sends SIGINT to its process
group (what a terminal does on Ctrl-C) as soon as a game is being built, and prints the seconds
until the child exited, the games it finished, and any partial file left behind.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = (
    "from wikiskill.benchmarks.textworld_cooking import ensure_games\n"
    "if __name__ == '__main__':\n    ensure_games(list(range(1000, 1000 + {games})))\n"
)


def one_try(games: int) -> tuple[float, int, list[str]]:
    with tempfile.TemporaryDirectory(prefix="wikiskill-interrupt-") as tmp:
        root, cache = Path(tmp), Path(tmp) / "cache"
        (root / "main.py").write_text(CHILD.format(games=games))
        child = subprocess.Popen(
            [sys.executable, str(root / "main.py")],
            start_new_session=True,
            # not the SIG_IGN it would inherit
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
            env={**os.environ, "WIKISKILL_CACHE_DIR": str(cache)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        while not any(cache.glob("*/*/.tmp-*")):
            time.sleep(0.05)
        started = time.perf_counter()
        os.killpg(child.pid, signal.SIGINT)
        child.wait()
        seconds = time.perf_counter() - started
        time.sleep(2)  # anything still running would write now
        names = sorted(path.name for path in cache.glob("*/*/*"))
        finished = sum(name.endswith(".z8") for name in names)
        partial = [
            name
            for name in names
            if name.startswith(".tmp-") or name.endswith(".json") and name[:-5] + ".z8" not in names
        ]
        return seconds, finished, partial


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--tries", type=int, default=3)
    args = parser.parse_args()
    print(f"cpus: {os.cpu_count()}, load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for number in range(1, args.tries + 1):
        seconds, finished, partial = one_try(args.games)
        print(
            f"try {number}: exited {seconds:.2f} s after Ctrl-C; {finished}/{args.games} games finished; "
            f"partial files left: {partial or 'none'}"
        )


if __name__ == "__main__":
    main()
