"""The wiki over many rounds: 20 offline rounds on a small textworld-cooking workspace.

Per round it prints the tokens of wiki text the maintainer was shown (index lines, log and the
most relevant pages, bounded by `maintainer.wiki_token_budget`) next to the tokens of the whole
wiki (what sending everything would cost), the active and merged/retired page counts, and
whether `wikiskill lint` is clean; then the consolidation steps that ran.

    python benchmarks/perf/wiki_growth.py [--rounds 20] [--train 10] [--val 4] [--budget 1500]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import yaml

from wikiskill import api
from wikiskill.knowledge.pages import read_pages
from wikiskill.knowledge.search import tokens
from wikiskill.store.trailers import Step
from wikiskill.store.workspace import MAIN


def wiki_tokens(ws) -> tuple[int, int, int]:
    files = ws.read_files(MAIN, "wiki")
    pages = read_pages(files)
    whole = tokens("".join(text for path, text in files.items() if path != "skill-impact.md"))
    active = sum(page.active for page in pages.values())
    return whole, active, len(pages) - active


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--train", type=int, default=10)
    parser.add_argument("--val", type=int, default=4)
    parser.add_argument("--budget", type=int, default=1500, help="maintainer.wiki_token_budget")
    parser.add_argument("--retire-after", type=int, default=6, help="wiki.retire_after")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = api.init_workspace(Path(tmp) / "ws", train=args.train, val=args.val, test=1)
        config = yaml.safe_load((ws.root / "wikiskill.yaml").read_text())
        config["maintainer"] = {**(config.get("maintainer") or {}), "wiki_token_budget": args.budget}
        config["wiki"] = {"consolidate_every": 5, "retire_after": args.retire_after}
        (ws.root / "wikiskill.yaml").write_text(yaml.safe_dump(config))
        print(
            f"{'round':>5} {'shown':>6} {'budget':>6} {'whole wiki':>10} {'active':>6} {'inactive':>8} "
            f"{'lint':>5} {'seconds':>7}"
        )
        worst, clean = 0, True
        for number in range(1, args.rounds + 1):
            started = time.perf_counter()
            api.evolve(ws, 1)
            seconds = time.perf_counter() - started
            maintain = next(c for c in ws.log(MAIN) if c.meta.step == Step.MAINTAIN and c.meta.round == number)
            shown = maintain.meta.wiki_tokens or 0
            whole, active, inactive = wiki_tokens(ws)
            problems = api.lint(ws)
            worst, clean = max(worst, shown), clean and not problems
            print(
                f"{number:>5} {shown:>6} {args.budget:>6} {whole:>10} {active:>6} {inactive:>8} "
                f"{'ok' if not problems else len(problems):>5} {seconds:>7.1f}"
            )
        print()
        for commit in reversed(ws.log(MAIN)):
            if commit.meta.step == Step.CONSOLIDATE:
                print(
                    f"r{commit.meta.round:03d} consolidate: {commit.meta.merged} merged, {commit.meta.retired} retired"
                )
        print(
            f"\nmost wiki tokens shown to the maintainer: {worst} (budget {args.budget}); "
            f"lint clean after every round: {clean}"
        )


if __name__ == "__main__":
    main()
