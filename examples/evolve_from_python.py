"""Evolve skills from Python, as the `wikiskill` command does: `wikiskill.api` is the library the
CLI is a thin shell over. Run it as

    python examples/evolve_from_python.py py-demo       # the offline model on TextWorld cooking games
    python examples/evolve_from_python.py py-demo --model openai/gpt-4o-mini --rounds 3

It creates the workspace (or opens it when it exists), evolves it, scores main's skills on the
val split, and compares them with the baseline's, task by task. See docs/integrations.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from wikiskill import api
from wikiskill.api import RunOptions


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--benchmark", default="textworld-cooking")
    parser.add_argument("--model", default="offline", help="a litellm model string, or offline")
    parser.add_argument("--api-base", default=None, help="an OpenAI-compatible server's base URL")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--train", type=int, default=None, help="train tasks (default: the suite's)")
    parser.add_argument("--val", type=int, default=None, help="val tasks (default: the suite's)")
    args = parser.parse_args(argv)

    if (args.workspace / "wikiskill.yaml").is_file():
        ws = api.open_workspace(args.workspace)
    else:
        ws = api.init_workspace(
            args.workspace, benchmark=args.benchmark, model=args.model, api_base=args.api_base,
            train=args.train, val=args.val,
        )  # fmt: skip
    options = RunOptions(concurrency=4)  # also: model, api_base, agent, console (a rich Console for progress)

    result = api.evolve(ws, args.rounds, options)
    print(f"{result.rounds_completed} round(s) completed; decisions: {[str(d) for d in result.decisions]}")
    print(f"incumbent val score: {result.incumbent:.3f}; skills: {[s.name for s in api.load_skills(ws)]}")

    scored = api.evaluate(ws, "val", "main", options)  # writes nothing to git
    print(f"main on val: {scored.evaluation.mean:.3f} over {scored.evaluation.size} task(s)")

    comparison = api.compare(ws, "baseline", "main", "val", options)
    low, high = comparison.interval
    print(f"main - baseline on val: {comparison.mean_diff:+.3f} (interval [{low:+.3f}, {high:+.3f}])")


if __name__ == "__main__":
    main()
