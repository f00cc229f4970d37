"""How often each gate policy merges a change that does nothing (A/A) and how often it merges a real
improvement of a known size; for `sequential`, how many validation tasks each verdict used; and
what a noisy judge (`judge.samples` 1 and 3) does to every policy.

The noisy agent and the kinds of score are described in _gate_sim.py. The sections:

  policies     every policy's class on 18, 50 and 200 tasks (pass/fail and graded), the
               original table
  sequential   `sequential` on a pool of `--pool` tasks in batches of `--batch` against `strict`
               on 18 tasks and `paired` on the pool: merges at A/A, +0.05, +0.1, +0.2, the mean
               and 90th percentile of tasks per verdict, and the tasks fixed-n `paired` needs for
               `sequential`'s power at +0.1 (vectorised mirrors of the classes, checked
               against the classes on the first trials)
  judge        every policy on judged scores, one and three readings per task, on 18 and
               `--pool` tasks (vectorised)
  rounds       a whole run of `--rounds` rounds on one pool (_gate_rounds.py): per policy, with and
               without `gate.alpha_budget`, the chance of any false merge and the power for
               the one real gain
  cost         `gate.cost` (`tiebreak`, `bound`) through the classes: merges when score and
               cost are A/A, when the cost is cut by 30% at an equal score, when a cheaper
               candidate is worse, and when a gain comes at +10% or 3x the cost

    python benchmarks/perf/gate_noise.py [--sections policies sequential judge rounds cost] [--quick]
                                         [--trials 2000] [--pool 200] [--batch 10]
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from _gate_rounds import rounds_section
from _gate_sim import KINDS, agreement, no_regression, paired, play, probabilities, sequential, strict
from wikiskill.core.config import CostRule, GateSettings
from wikiskill.loop.cost_gate import weigh_cost
from wikiskill.loop.gate_policies import gate_policy
from wikiskill.store.evaluations import Evaluation
from wikiskill.store.trailers import Decision

POLICIES = {
    "strict": GateSettings(policy="strict"),
    "confirm": GateSettings(policy="confirm"),
    "no_regression": GateSettings(policy="no_regression", max_broken=0),
    "paired": GateSettings(policy="paired", confidence=0.95),
}
DELTAS = (0.0, 0.05, 0.1, 0.2)
ALPHA = 0.05


# -- policies: every class, one trial at a time ------------------------------------------------------


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
        if verdict.decision == Decision.ACCEPTED and policy.plan().confirms:
            verdict = policy.judge(evaluation(draw(q, rng, graded), "confirmation"), incumbent)
        accepted += verdict.decision == Decision.ACCEPTED
    return accepted / trials


def policies_section(trials: int, graded_trials: int, delta: float, sizes: list[int]) -> None:
    for graded in (False, True):
        count = graded_trials if graded else trials
        kind = "graded scores (partial credit)" if graded else "pass/fail scores"
        print(
            f"\n{kind}: share of candidates merged, {count} trials per cell "
            f"(A/A = no real change; +{delta:g} = true mean gain of about {delta:g})\n"
        )
        header = ["policy"] + [f"{label} n={n}" for n in sizes for label in ("A/A", f"+{delta:g}")]
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for name, settings in POLICIES.items():
            start = time.perf_counter()
            cells = [f"{accept_rate(settings, n, d, count, graded, seed=n):.3f}" for n in sizes for d in (0.0, delta)]
            print("| " + " | ".join([name, *cells]) + f" |   ({time.perf_counter() - start:.0f} s)")


# -- sequential: vectorised ----------------------------------------------------------------------------


def sequential_section(trials: int, pool: int, batch: int, checks: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    print(
        f"\nsequential (pool {pool}, batch {batch}, confidence {1 - ALPHA:g}) against strict on 18 tasks and paired "
        f"on {pool}: share merged, and tasks per verdict (mean / 90th percentile); {trials} trials per cell\n"
    )
    header = [
        "scores",
        "policy",
        *[("A/A" if d == 0 else f"+{d:g}") for d in DELTAS],
        "tasks A/A",
        "tasks +0.05",
        "tasks +0.1",
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    power, used = {}, {}
    for kind in KINDS[:2]:
        rows: dict[str, list[str]] = {"strict (18)": [], f"paired ({pool})": [], "sequential": []}
        tasks: dict[float, np.ndarray] = {}
        for delta in DELTAS:
            p, q = probabilities(rng, trials, pool, delta)
            incumbent, candidate = play(rng, p, kind), play(rng, q, kind)
            accepted, tasks[delta] = sequential(candidate, incumbent, ALPHA, batch)
            rows["strict (18)"].append(f"{strict(candidate[:, :18], incumbent[:, :18]).mean():.3f}")
            rows[f"paired ({pool})"].append(f"{paired(candidate, incumbent, ALPHA).mean():.3f}")
            rows["sequential"].append(f"**{accepted.mean():.3f}**" if delta in (0.0, 0.1) else f"{accepted.mean():.3f}")
            power[(kind, delta)] = accepted.mean()
            if delta == 0.1:
                settings = GateSettings(policy="sequential", batch=batch, confidence=1 - ALPHA)
                agree = agreement(kind, candidate, incumbent, accepted, settings, checks)
                agree_paired = agreement(
                    kind,
                    candidate,
                    incumbent,
                    paired(candidate, incumbent, ALPHA),
                    GateSettings(policy="paired", confidence=1 - ALPHA),
                    checks,
                )
        used.update({(kind, delta): spent.mean() for delta, spent in tasks.items()})
        fixed = {"strict (18)": "18", f"paired ({pool})": str(pool)}
        for name, cells in rows.items():
            spent = (
                [fixed[name]] * 3
                if name in fixed
                else [f"{tasks[d].mean():.0f} / {np.percentile(tasks[d], 90):.0f}" for d in (0.0, 0.05, 0.1)]
            )
            print("| " + " | ".join([kind, name, *cells, *spent]) + " |")
        print(
            f"|   | (classes agree with the mirror on {agree:.0%} of {checks} sequential and {agree_paired:.0%} of "
            f"{checks} paired verdicts at +0.1) |" + "   |" * (len(header) - 2)
        )
    print(
        f"\ntasks fixed-n paired needs for sequential's power ({trials} trials per n; gains sequential merges "
        "at least 99% of the time left out, where any n past the threshold has that power):\n"
    )
    print(
        "| scores | gain | sequential's power | fixed-n paired needs | sequential's mean tasks | ratio "
        "| mean tasks A/A | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for kind in KINDS[:2]:
        for delta in DELTAS[1:]:
            if power[(kind, delta)] >= 0.99:
                continue
            needed = fixed_n_for(rng, kind, delta, power[(kind, delta)], trials, pool)
            gain, aa = used[(kind, delta)], used[(kind, 0.0)]
            print(
                f"| {kind} | +{delta:g} | {power[(kind, delta)]:.3f} | {needed:.0f} | {gain:.0f} | "
                f"{gain / needed:.2f} | {aa:.0f} | {aa / needed:.2f} |"
            )


def fixed_n_for(rng: np.random.Generator, kind: str, delta: float, power: float, trials: int, pool: int) -> float:
    """The tasks at which fixed-n paired merges +delta as often as `power` (linear between steps of 10)."""
    most = 3 * pool
    p, q = probabilities(rng, trials, most, delta)
    incumbent, candidate = play(rng, p, kind), play(rng, q, kind)
    before_n, before = 0, 0.0
    for n in range(10, most + 1, 10):
        share = paired(candidate[:, :n], incumbent[:, :n], ALPHA).mean()
        if share >= power:
            return before_n + (n - before_n) * (power - before) / max(share - before, 1e-9)
        before_n, before = n, share
    return float("inf")


# -- judge noise: vectorised -------------------------------------------------------------------------


def judge_section(trials: int, pool: int, batch: int, checks: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    print(
        f"\njudged scores (a judge reading the graded score with noise, sd 0.2 on a 0-10 scale; judge.samples "
        f"readings averaged per task): share merged, {trials} trials per cell\n"
    )
    sizes = (18, pool)
    header = ["judge.samples", "policy", *[f"{label} n={n}" for n in sizes for label in ("A/A", "+0.1")]]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    agree: list[str] = []
    for kind in KINDS[2:]:
        cells: dict[str, list[str]] = {
            name: [] for name in ("strict", "confirm", "no_regression", "paired", "sequential")
        }
        for n in sizes:
            for delta in (0.0, 0.1):
                p, q = probabilities(rng, trials, n, delta)
                incumbent, candidate, again = play(rng, p, kind), play(rng, q, kind), play(rng, q, kind)
                verdicts = {
                    "strict": strict(candidate, incumbent),
                    "confirm": strict(candidate, incumbent) & strict(again, incumbent),
                    "no_regression": no_regression(candidate, incumbent),
                    "paired": paired(candidate, incumbent, ALPHA),
                    "sequential": sequential(candidate, incumbent, ALPHA, batch)[0],
                }
                for name, merged in verdicts.items():
                    cells[name].append(f"{merged.mean():.3f}")
                if n == sizes[0]:  # the mirrors are least exact on few tasks
                    for name in ("paired", "sequential"):
                        settings = GateSettings(policy=name, batch=batch, confidence=1 - ALPHA)
                        share = agreement(kind, candidate, incumbent, verdicts[name], settings, checks)
                        agree.append(f"{name} {kind} {'A/A' if delta == 0 else '+0.1'} {share:.0%}")
        for name, row in cells.items():
            print("| " + " | ".join([kind.rpartition("x")[2], name, *row]) + " |")
    print(
        f"\nthe classes give the mirror's verdict on {sizes[0]} tasks, on the first {checks} trials: "
        + ", ".join(agree)
    )


# -- cost: every class, one trial at a time -----------------------------------------------------------

COST_RULES = {
    "paired, ignore": GateSettings(policy="paired"),
    "paired, tiebreak": GateSettings(policy="paired", cost=CostRule.TIEBREAK),
    "sequential, tiebreak": GateSettings(policy="sequential", cost=CostRule.TIEBREAK),
    "paired, tiebreak, noninferiority 0.1": GateSettings(policy="paired", cost=CostRule.TIEBREAK, noninferiority=0.1),
    "strict, tiebreak": GateSettings(policy="strict", cost=CostRule.TIEBREAK),
    "paired, bound": GateSettings(policy="paired", cost=CostRule.BOUND),
    "strict, bound": GateSettings(policy="strict", cost=CostRule.BOUND),
}
COST_CASES = (
    ("A/A, A/A cost", 0.0, 1.0),
    ("A/A, cost -30%", 0.0, 0.7),
    ("-0.05, cost -30%", -0.05, 0.7),
    ("+0.1, A/A cost", 0.1, 1.0),
    ("+0.1, cost +10%", 0.1, 1.1),
    ("+0.1, cost x3", 0.1, 3.0),
)
"""(label, true mean score gain, true ratio of the candidate's per-task cost to main's)."""


def costed(scores: dict[str, float], costs: list[float], name: str) -> Evaluation:
    return Evaluation(name, "setup", name, scores, tokens=dict(zip(scores, costs, strict=True)))


def cost_merge_rate(settings: GateSettings, n: int, delta: float, factor: float, trials: int, seed: int) -> float:
    """Pass/fail scores as in `policies`; each task's tokens a log-normal size (about 400, a factor
    of 1.6 between tasks) times log-normal run-to-run noise (sd 0.2 in log) on each side."""
    policy = gate_policy(settings)
    rng = random.Random(seed)
    merged = 0
    for _ in range(trials):
        p = [rng.betavariate(0.5, 0.5) for _ in range(n)]
        q = [min(1.0, max(0.0, x + delta)) for x in p]
        size = [rng.lognormvariate(6.0, 0.5) for _ in range(n)]
        incumbent = costed(draw(p, rng, False), [s * rng.lognormvariate(0, 0.2) for s in size], "incumbent")
        candidate = costed(draw(q, rng, False), [s * factor * rng.lognormvariate(0, 0.2) for s in size], "candidate")
        verdict = weigh_cost(settings, policy.judge(candidate, incumbent), candidate, incumbent)
        merged += verdict.decision == Decision.ACCEPTED
    return merged / trials


def cost_section(trials: int, sizes: list[int]) -> None:
    print(
        f"\ngate.cost on pass/fail scores: share of candidates merged, {trials} trials per cell (confidence "
        "0.95, noninferiority 0.02, cost_margin 0.1, max_cost_increase 0.1; columns: true score gain, true "
        "cost ratio)\n"
    )
    for n in sizes:
        header = ["n", "policy, gate.cost", *[label for label, _, _ in COST_CASES]]
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for name, settings in COST_RULES.items():
            start = time.perf_counter()
            cells = [
                f"{cost_merge_rate(settings, n, delta, factor, trials, seed=n):.3f}" for _, delta, factor in COST_CASES
            ]
            print("| " + " | ".join([str(n), name, *cells]) + f" |   ({time.perf_counter() - start:.0f} s)")
        print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--sections",
        nargs="+",
        choices=("policies", "sequential", "judge", "rounds", "cost"),
        default=["policies", "sequential", "judge", "rounds", "cost"],
    )
    parser.add_argument("--quick", action="store_true", help="a tenth of the trials: a smoke run, not figures")
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--graded-trials", type=int, default=400, help="policies section: bootstrap trials cost more")
    parser.add_argument("--delta", type=float, default=0.1, help="policies section: the real gain")
    parser.add_argument("--sizes", type=int, nargs="+", default=[18, 50, 200], help="policies section")
    parser.add_argument("--pool", type=int, default=200)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--checks", type=int, default=100, help="trials on which the classes check the mirrors")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=20, help="rounds section: rounds per run")
    parser.add_argument("--rounds-pools", type=int, nargs="+", default=[200], help="rounds section: val pools")
    parser.add_argument("--budget", type=float, default=0.05, help="rounds section: gate.alpha_budget")
    parser.add_argument("--cost-trials", type=int, default=400, help="cost section: permutation tests cost more")
    parser.add_argument("--cost-sizes", type=int, nargs="+", default=[18, 50, 200], help="cost section")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    started = time.perf_counter()
    if "policies" in args.sections:
        policies_section(args.trials // scale, args.graded_trials // scale, args.delta, args.sizes)
    if "sequential" in args.sections:
        sequential_section(args.trials // scale, args.pool, args.batch, args.checks // scale, args.seed)
    if "judge" in args.sections:
        judge_section(args.trials // scale, args.pool, args.batch, args.checks // scale, args.seed)
    if "rounds" in args.sections:
        rounds_section(
            args.trials // scale, args.rounds_pools, args.batch, args.rounds, args.delta, args.budget, args.seed
        )
    if "cost" in args.sections:
        cost_section(args.cost_trials // scale, args.cost_sizes)
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
