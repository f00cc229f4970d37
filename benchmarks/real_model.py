"""Run N rounds of `evolve` against any OpenAI-compatible server and report how the model coped.

    python benchmarks/real_model.py --api-base http://127.0.0.1:18080/v1 [--model openai/qwen]
        [--rounds 2] [--benchmark example-qa] [--concurrency 2] [--timeout 600]
        [--context-window N] [--max-tokens N] [--keep DIR]

A fresh workspace is made (in --keep DIR, or a temporary folder that is removed), evolved with
every role on the given model, and then read back from git. Printed per role: calls, prompt and
completion tokens, invalid outputs (the agent: replies without an answer; the maintainer: replies
that were not its JSON object; the proposer: turns without a usable tool call); then well-formed
proposals out of rounds, how many reached validation, the decisions and the wall time.
For manual checks only: no test or CI step needs a real model.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import yaml

from wikiskill import api
from wikiskill.api import RunOptions
from wikiskill.core.config import Role
from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.store.rounds import round_label
from wikiskill.store.settings import load_config
from wikiskill.store.workspace import MAIN, Workspace


def prepare(path: Path, args: argparse.Namespace) -> Workspace:
    ws = api.init_workspace(
        path, benchmark=args.benchmark, model=args.model, api_base=args.api_base, concurrency=args.concurrency
    )
    config_path = ws.root / "wikiskill.yaml"
    data = yaml.safe_load(config_path.read_text())
    data.setdefault("llm", {})["timeout"] = args.timeout
    for role in Role:
        role_settings = data.setdefault(role.value, {})
        if args.context_window:
            role_settings["context_window"] = args.context_window
        if args.max_tokens:
            role_settings["max_tokens"] = args.max_tokens
    config_path.write_text(yaml.safe_dump(data, sort_keys=False))
    return ws


def invalid_agent_outputs(ws: Workspace, rounds: int) -> int:
    """Tasks whose reply held no answer, over every rollout and validation of the run."""
    texts = [ws.read_file(MAIN, "raw/baseline/val.jsonl") or ""]
    for number in range(1, rounds + 1):
        label = round_label(number)
        texts.append(ws.read_file(MAIN, f"raw/{label}/train/outcomes.jsonl") or "")
        story = api.show_round(ws, number)
        texts.append("".join(json.dumps(row) + "\n" for row in story.validation))
    rows = [json.loads(line) for text in texts for line in text.splitlines() if line.strip()]
    return sum(1 for row in rows if row.get("prediction") in (None, ""))


def invalid_maintainer_outputs(ws: Workspace, rounds: int) -> int:
    count = 0
    for number in range(1, rounds + 1):
        text = ws.read_file(MAIN, f"raw/{round_label(number)}/maintainer.json")
        if text:
            count += sum(1 for turn in json.loads(text)["turns"] if turn.get("error"))
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--model", default="openai/qwen")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--benchmark", default="example-qa")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--context-window", type=int, default=None)
    parser.add_argument("--max-tokens", type=int, default=None)
    parser.add_argument("--keep", type=Path, default=None, help="make the workspace here and keep it")
    args = parser.parse_args()

    root = args.keep or Path(tempfile.mkdtemp(prefix="wikiskill-real-")) / "ws"
    ws = prepare(root, args)
    config = load_config(ws.root)
    meter = Meter(config.budget)

    def factory(role: Role) -> LiteLLMModel:
        return LiteLLMModel(config.role(role), config.llm, role, meter)

    started = time.perf_counter()
    result = api.evolve(ws, args.rounds, options=RunOptions(model_factory=factory))
    wall = time.perf_counter() - started

    stories = [api.show_round(ws, number) for number in range(1, result.rounds_completed + 1)]
    invalid = {
        Role.AGENT: invalid_agent_outputs(ws, result.rounds_completed),
        Role.MAINTAINER: invalid_maintainer_outputs(ws, result.rounds_completed),
        Role.PROPOSER: sum(story.invalid_outputs for story in stories),
    }
    print(f"model {args.model} at {args.api_base}; benchmark {args.benchmark}; workspace {ws.root}")
    print(f"{'role':<11}{'calls':>7}{'prompt tok':>12}{'compl tok':>11}{'invalid':>9}")
    for role in Role:
        usage = meter.snapshot().get(role)
        calls, prompt, completion = (usage.calls, usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0, 0)
        print(f"{role:<11}{calls:>7}{prompt:>12}{completion:>11}{invalid[role]:>9}")
    well_formed = sum(1 for story in stories if story.validation or story.decision == "no_action")
    validated = sum(1 for story in stories if story.validation)
    print(f"well-formed proposals: {well_formed} of {len(stories)} rounds ({validated} reached validation)")
    for story in stories:
        why = story.proposer_error or story.reason
        print(f"  round {story.number}: {story.action or '-'} {story.skill or ''} -> {story.decision}: {why}")
    print(f"wall time: {wall:.0f} s for {result.rounds_completed} round(s); incumbent {result.incumbent:.3f}")
    if args.keep is None:
        shutil.rmtree(root.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
