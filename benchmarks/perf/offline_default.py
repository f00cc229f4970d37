"""Wall time of the README's main job: `wikiskill init` + `wikiskill evolve --rounds 3` on the
default textworld-cooking workspace with the offline model.

Runs it twice side by side in one process tree: once with an empty game cache (what a new user
sees, game generation included) and once with the games already generated.

    python benchmarks/perf/offline_default.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WIKISKILL = [sys.executable, "-m", "wikiskill"]


def run(workdir: Path, cache: Path, rounds: int) -> float:
    env = {**os.environ, "WIKISKILL_CACHE_DIR": str(cache)}
    start = time.perf_counter()
    subprocess.run([*WIKISKILL, "init", str(workdir / "ws")], env=env, check=True, capture_output=True)
    subprocess.run(
        [*WIKISKILL, "-C", str(workdir / "ws"), "evolve", "--rounds", str(rounds)],
        env=env,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cache = root / "cache"
        cold = run(root / "cold", cache, args.rounds)
        warm = run(root / "warm", cache, args.rounds)
        log = subprocess.run(
            [*WIKISKILL, "-C", str(root / "warm" / "ws"), "log"], capture_output=True, text=True
        ).stdout
    print(f"cpus: {os.cpu_count()}, load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"init + evolve --rounds {args.rounds}, empty game cache : {cold:7.1f} s")
    print(f"init + evolve --rounds {args.rounds}, games generated  : {warm:7.1f} s")
    print(f"game generation share                         : {(cold - warm) / cold:7.1%}")
    print(log)


if __name__ == "__main__":
    main()
