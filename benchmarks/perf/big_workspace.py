"""`wikiskill status`, `log` and `prompt` on a big synthetic workspace: 10,000 traces, 500 wiki
pages and 100 skills written by 50 rounds of harness-style commits (rollout, maintain, propose and
validate on a candidate branch, gate: merged or tagged rejected) with their trailers.

    python benchmarks/perf/big_workspace.py [--rounds 50] [--repeats 5] [--keep DIR]

Each command runs as a subprocess (median of --repeats wall times); a second run of each checks
that it never imported litellm, datasets or textworld.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import MODEL, median_time, qa_suite, table
from wikiskill import api
from wikiskill.store.evaluations import skills_id
from wikiskill.store.workspace import MAIN, Workspace, format_message

TRACES_PER_ROUND, PAGES_PER_ROUND = 200, 10
HEAVY = ("litellm", "datasets", "textworld")
CLI = [sys.executable, "-c", "import sys; from wikiskill.cli import app; sys.argv[0] = 'wikiskill'; app()"]
CHECK = (
    "import sys; from wikiskill.cli import app\n"
    "try:\n    app(sys.argv[1:], standalone_mode=False)\nfinally:\n"
    f"    print('HEAVY', [m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)\n"
)


def trace(task_id: str, round_number: int) -> str:
    score = float(hash((task_id, round_number)) % 3 == 0)
    return (
        json.dumps(
            {
                "task_id": task_id,
                "split": "train",
                "kind": "qa",
                "question": f"Question {task_id}?",
                "messages": [
                    {"role": "user", "content": f"Question {task_id}?"},
                    {"role": "assistant", "content": "Let me think step by step. " * 20 + "<answer>3</answer>"},
                ],
                "prediction": "3",
                "expected": "3" if score else "4",
                "score": score,
                "usage": {"calls": 1, "prompt_tokens": 120, "completion_tokens": 40, "cost_usd": 4.2e-05},
            },
            indent=1,
        )
        + "\n"
    )


def skill(name: str, round_number: int) -> str:
    return (
        f"---\nname: {name}\ndescription: Procedure {name} for tasks that slip in round {round_number}.\n"
        f'metadata:\n  wikiskill-round: "{round_number}"\n---\n\n## When to Apply\nWhen {name} applies.\n\n'
        "## When NOT to Apply\nOtherwise.\n\n## Instructions\n" + "".join(f"{i}. Step {i}.\n" for i in range(1, 9))
    )


def trailers(round_number: int, step: str, **extra: object) -> dict[str, object]:
    return {
        "Round": round_number,
        "Step": step,
        **extra,
        "Cost-USD": "0.012000",
        "Tokens": 160_000,
        "Cost-Agent-USD": "0.012000",
        "Tokens-Agent": 160_000,
    }


def build_round(ws: Workspace, number: int, index: list[str]) -> None:
    label = f"r{number:03d}"
    changes = {
        f"raw/{label}/train/train-{i:05d}.json": trace(f"train-{i:05d}", number) for i in range(TRACES_PER_ROUND)
    }
    ws.commit(
        changes,
        format_message(
            f"{label} rollout: train won 66/200, score 0.330", trailers(number, "rollout", Score="0.330000")
        ),
    )
    pages = {}
    for i in range(PAGES_PER_ROUND):
        slug = f"pattern-{number:03d}-{i}"
        pages[f"wiki/patterns/{slug}.md"] = f"---\nkind: pattern\n---\n# {slug}\n\nA failure seen in round {number}.\n"
        index.append(f"- [{slug}](patterns/{slug}.md): problem + root cause + fix")
    pages["wiki/index.md"] = "# Wiki index\n\n" + "\n".join(index) + "\n"
    ws.commit(
        pages,
        format_message(f"{label} maintain: {PAGES_PER_ROUND} pattern page(s) written", trailers(number, "maintain")),
    )
    accept = number % 5 != 0  # over 50 rounds: 40 accepted, creating 3 or 2 skills each = 100
    names = [f"skill-{number:03d}-{i}" for i in range((3 if number % 2 else 2) if accept else 1)]
    branch = f"skill/{label}-{names[0]}"
    ws.create_branch(branch, MAIN)
    files = {f"skills/{name}/SKILL.md": skill(name, number) for name in names}
    ws.commit(
        files,
        format_message(
            f"{label} propose: create {names[0]}", trailers(number, "propose", Action="create", Skill=names[0])
        ),
        branch=branch,
    )
    validated = trailers(number, "validate", Score="0.500000", **{"Skills-Id": skills_id(ws, branch)})
    tip = ws.commit(
        {f"raw/{label}/val.jsonl": '{"id": "val-0", "score": 1.0}\n'},
        format_message(f"{label} validate: val", validated),
        branch=branch,
    )
    impact = (ws.read_file(MAIN, "wiki/skill-impact.md") or "") + f"\n\n## {label} · create · {names[0]}\n"
    gate = trailers(
        number,
        "gate",
        Decision="accepted" if accept else "rejected",
        Action="create",
        Skill=names[0],
        Score="0.500000",
        Incumbent="0.400000",
    )
    if accept:
        ws.commit(
            {"wiki/skill-impact.md": impact},
            format_message(f"{label} gate: accepted", {**gate, "Skills-Id": skills_id(ws, branch)}),
            base=ws.merged_tree(MAIN, tip),
            extra_parents=(tip,),
        )
    else:
        ws.tag(f"rejected/{label}-{names[0]}", tip)
        ws.commit({"wiki/skill-impact.md": impact}, format_message(f"{label} gate: rejected", gate))
    ws.delete_branch(branch)
    ws.tag(f"round/{number:03d}", ws.head(MAIN))
    ws.pack_objects()  # as evolve does after each round


def build(root: Path, rounds: int) -> Path:
    suite = qa_suite(root / "suite", {"train": 5, "val": 5, "test": 5})
    ws = api.init_workspace(root / "ws", benchmark=f"jsonl:{suite}", model=MODEL, api_base="http://127.0.0.1:9/v1")
    ws.commit(
        {"raw/baseline/val.jsonl": '{"id": "val-0", "score": 0.4}\n'},
        format_message(
            "baseline: val won 2/5, score 0.400",
            {"Round": 0, "Step": "baseline", "Score": "0.400000", "Skills-Id": skills_id(ws, MAIN)},
        ),
    )
    ws.tag("baseline", ws.head(MAIN))
    index: list[str] = []
    for number in range(1, rounds + 1):
        build_round(ws, number, index)
        if number % 10 == 0:
            print(f"  {number} rounds built", flush=True)
    return ws.root


def heavy_imports(ws: Path, command: list[str]) -> str:
    done = subprocess.run([sys.executable, "-c", CHECK, "-C", str(ws), *command], capture_output=True, text=True)
    line = next((line for line in done.stderr.splitlines() if line.startswith("HEAVY")), "HEAVY ?")
    return line[len("HEAVY ") :]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None, help="build the workspace here and keep it")
    args = parser.parse_args()
    os.environ.setdefault("GIT_AUTHOR_NAME", "perf")
    os.environ.setdefault("GIT_AUTHOR_EMAIL", "perf@localhost")
    root = args.keep or Path(tempfile.mkdtemp())
    try:
        started = time.perf_counter()
        ws = build(root, args.rounds)
        counts = {
            what: int(
                subprocess.run(
                    f"git -C {ws} ls-files {where} | grep -c {pattern}", shell=True, capture_output=True, text=True
                ).stdout
                or 0
            )
            for what, where, pattern in (
                ("traces", "raw", "train-"),
                ("wiki pages", "wiki/patterns", ".md"),
                ("skills", "skills", "SKILL.md"),
            )
        }
        commits = subprocess.run(["git", "-C", str(ws), "rev-list", "--all", "--count"], capture_output=True, text=True)
        print(f"built in {time.perf_counter() - started:.0f} s: {counts}, {commits.stdout.strip()} commits\n")
        rows = []
        for command in (["status"], ["log"], ["prompt"], ["prompt", "--mode", "index"]):
            run = functools.partial(subprocess.run, [*CLI, "-C", str(ws), *command], check=True, capture_output=True)
            seconds = median_time(run, args.repeats)
            rows.append(
                [
                    f"wikiskill {' '.join(command)}",
                    seconds,
                    "yes" if seconds < 1.0 else "NO",
                    heavy_imports(ws, command),
                ]
            )
        print(table(["command", f"median of {args.repeats} (s)", "< 1 s", "heavy modules imported"], rows))
        print(f"\nload average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
