"""The `rounds` section of gate_noise.py: a whole run on one val pool, R rounds, each a candidate
judged against main's recorded evaluation (drawn once, drawn again only after a merge, as the
harness re-validates main then). Every round's candidate does nothing except one of +delta at a
known round. Per policy, with each round at `gate.confidence` and with `gate.alpha_budget` spent
by the online fallback rule of wikiskill/loop/alpha_budget.py: the chance of any false merge over
the run and the chance the real gain is merged. Pass/fail scores, the vectorised mirrors of
_gate_sim.py."""

from __future__ import annotations

import numpy as np

from _gate_sim import paired, play, sequential, strict
from wikiskill.loop.alpha_budget import next_spend

POLICIES = ("strict", "paired", "sequential")


def verdicts(policy: str, candidate: np.ndarray, incumbent: np.ndarray, alpha: np.ndarray, batch: int) -> np.ndarray:
    """Each row's verdict at its own level (rows grouped by level: the designs are cached by it)."""
    if policy == "strict":
        return strict(candidate, incumbent)
    merged = np.zeros(len(candidate), bool)
    for level in np.unique(alpha):
        rows = alpha == level
        level = round(float(level), 12)
        if policy == "paired":
            merged[rows] = paired(candidate[rows], incumbent[rows], level)
        else:
            merged[rows] = sequential(candidate[rows], incumbent[rows], level, batch)[0]
    return merged


def run(
    rng: np.random.Generator,
    policy: str,
    budget: float | None,
    trials: int,
    pool: int,
    batch: int,
    rounds: int,
    real: int,
    delta: float,
    alpha: float = 0.05,
) -> tuple[float, float]:
    """(P(any false merge over the run), P(the real gain at round `real` is merged))."""
    p = rng.beta(0.5, 0.5, (trials, pool))
    incumbent = play(rng, p, "pass/fail")
    history: list[list[tuple[float, bool]]] = [[] for _ in range(trials)]
    false_merge, power = np.zeros(trials, bool), np.zeros(trials, bool)
    for number in range(1, rounds + 1):
        chance = np.minimum(1.0, p + delta) if number == real else p
        candidate = play(rng, chance, "pass/fail")
        levels = np.array(
            [next_spend(budget, rounds, before).alpha if budget else alpha for before in history]
            if budget
            else [alpha] * trials
        )
        merged = verdicts(policy, candidate, incumbent, levels, batch)
        if number == real:
            power = merged
            p = np.where(merged[:, None], chance, p)
        else:
            false_merge |= merged
        again = play(rng, p, "pass/fail")
        incumbent = np.where(merged[:, None], again, incumbent)
        for row in range(trials):
            history[row].append((float(levels[row]), bool(merged[row])))
    return float(false_merge.mean()), float(power.mean())


def rounds_section(
    trials: int, pools: list[int], batch: int, rounds: int, delta: float, budget: float, seed: int
) -> None:
    real = rounds // 2
    print(
        f"\nrounds: {rounds} rounds on one val pool, every candidate a change that does nothing but one of "
        f"+{delta:g} at round {real}; pass/fail scores, {trials} trials per row; P(any false merge) over the "
        f"run, then the power (the real gain merged); budget: gate.alpha_budget {budget:g} over "
        f"gate.alpha_rounds {rounds}\n"
    )
    print("| pool | policy | budget | P(any false merge) | power at +" + f"{delta:g} |")
    print("|---|---|---|---|---|")
    for pool in pools:
        for policy in POLICIES:
            for setting in (None, budget):
                if policy == "strict" and setting is not None:
                    continue
                rng = np.random.default_rng(seed)
                false, power = run(rng, policy, setting, trials, pool, batch, rounds, real, delta)
                label = "budget" if setting else "none (each round at 0.05)" if policy != "strict" else "none"
                print(f"| {pool} | {policy} | {label} | {false:.3f} | {power:.3f} |")
