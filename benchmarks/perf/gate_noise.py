"""How often each gate policy merges a change that does nothing (A/A), and how often it merges a
real improvement of a known size, at 18, 50 and 200 validation tasks.

The noisy agent is scripted: task i is solved with probability p_i (p_i ~ Beta(0.5, 0.5): most
tasks are nearly always or nearly never solved, some are flaky), independently in every
evaluation. An A/A candidate has the same p_i; an improved one has p_i + delta (capped at 1), so its
expected mean gain is about delta. `graded` scores are partial credit (5 sub-goals, each reached
with probability p_i), as in TextWorld. Every verdict comes from the gate's own policy classes.

    python benchmarks/perf/gate_noise.py [--trials 2000] [--delta 0.1] [--sizes 18 50 200]
"""

from __future__ import annotations

import argparse
import random
import time

from wikiskill.core.config import GateSettings
from wikiskill.loop.gate_policies import gate_policy
from wikiskill.store.evaluations import Evaluation
from wikiskill.store.trailers import Decision

POLICIES = {
    "strict": GateSettings(policy="strict"),
    "confirm": GateSettings(policy="confirm"),
    "no_regression": GateSettings(policy="no_regression", max_broken=0),
    "paired": GateSettings(policy="paired", confidence=0.95),
}


def draw(p: list[float], rng: random.Random, graded: bool) -> dict[str, float]:
    if graded:
        return {f"t{i}": sum(rng.random() < q for _ in range(5)) / 5 for i, q in enumerate(p)}
    return {f"t{i}": float(rng.random() < q) for i, q in enumerate(p)}


def evaluation(scores: dict[str, float], name: str) -> Evaluation:
    return Evaluation(name, "setup", name, scores)


def accept_rate(settings: GateSettings, n: int, delta: float, trials: int, graded: bool, seed: int) -> float:
    policy = gate_policy(settings)
    rng = random.Random(seed)
    accepted = 0
    for _ in range(trials):
        p = [rng.betavariate(0.5, 0.5) for _ in range(n)]
        q = [min(1.0, x + delta) for x in p]
        incumbent = evaluation(draw(p, rng, graded), "incumbent")
        candidate = evaluation(draw(q, rng, graded), "candidate")
        verdict = policy.judge(candidate, incumbent)
        if verdict.decision == Decision.ACCEPTED and policy.confirms:
            verdict = policy.judge(evaluation(draw(q, rng, graded), "confirmation"), incumbent)
        accepted += verdict.decision == Decision.ACCEPTED
    return accepted / trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--graded-trials", type=int, default=400, help="bootstrap trials cost more")
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--sizes", type=int, nargs="+", default=[18, 50, 200])
    args = parser.parse_args()
    for graded in (False, True):
        trials = args.graded_trials if graded else args.trials
        kind = "graded scores (partial credit)" if graded else "pass/fail scores"
        print(f"\n{kind}: share of candidates merged, {trials} trials per cell "
              f"(A/A = no real change; +{args.delta:g} = true mean gain of about {args.delta:g})")
        header = ["policy"] + [f"{label} n={n}" for n in args.sizes for label in ("A/A", f"+{args.delta:g}")]
        print(" | ".join(header))
        print(" | ".join("---" for _ in header))
        for name, settings in POLICIES.items():
            start = time.perf_counter()
            cells = []
            for n in args.sizes:
                for delta in (0.0, args.delta):
                    cells.append(f"{accept_rate(settings, n, delta, trials, graded, seed=n):.3f}")
            print(" | ".join([name, *cells]) + f"   ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
