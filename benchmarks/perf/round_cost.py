"""What a round costs, before and after provider prompt caching and the proposer's stubs: the same
scripted rounds on example-qa, side by side in one run, against the fake server.

    python benchmarks/perf/round_cost.py [--rounds 2] [--kept 4000] [--trace-chars 3000]

The scripted world: the task agent answers with about --trace-chars characters of reasoning (a
trace that size), slipping on reversals until a skill carries the SPELL marker; the maintainer
writes one page; the proposer reads all 12 train traces, one a turn, then proposes the SPELL skill
in round 1 (accepted) and no_action after. Four runs, each in a fresh workspace:

- `marked`, before: a provider that caches only up to `cache_control` marks (Anthropic's),
  requests without marks (`llm.cache_breakpoints: off`) and without stubs
  (`proposer.kept_results_tokens: null`): what wikiskill did before;
- `marked`, after: marks on every request (`always`; the fake server is OpenAI-compatible, a real
  Claude gets them under `auto`) and stubs past --kept tokens;
- `prefix`, before/after: a provider that caches any repeated prefix (OpenAI's): no stubs, then
  stubs.

Per round and role, from the ledger (the commits' `Tokens-<Role>` and `Cached-<Role>` trailers):
tokens and the cached share; for the proposer, from its transcript in raw/: prompt tokens, those
billed at the full (uncached) price, and the largest prompt of a turn. The model name is
`openai/gpt-4o-mini`, so costs are litellm's prices with its cache-read price.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from pathlib import Path

import yaml

from _common import MODEL, table
from wikiskill import api
from wikiskill.llm.backend import import_litellm
from wikiskill.store.rounds import round_label
from wikiskill.store.trailers import Step
from wikiskill.store.workspace import MAIN
from wikiskill.testing.fakeserver import FakeOpenAIServer, Reply

SPELL = "SPELL-OUT-MARKER"
TRAIN = [f"train-{index:02d}" for index in range(12)]
SKILL = (
    "---\nname: spell-letters\ndescription: Use when a question asks to reverse or count the letters of a "
    "word.\n---\n\n## When to Apply\nReversing or counting the letters of a word.\n\n## When NOT to Apply\n"
    f"Questions not about letters.\n\n## Instructions\n1. Write the word one letter per line.\n2. {SPELL}: "
    "read the lines bottom-up.\n"
)
PROPOSALS = {
    1: {
        "action": "create",
        "name": "spell-letters",
        "skill_md": SKILL,
        "rationale": "reversals fail (train-01, train-03); spelling letter by letter fixes them",
    }
}
PAGE = (
    "# Reversal slips\n\n## Description\nThe agent reverses words wrongly.\n\n## Root cause\nIt reads the "
    "word as a whole.\n\n## Evidence\nSHOWN: answered the word unreversed.\n\n## Fix\nSpell it letter by letter.\n"
)
MAINTAINER = {
    "create_patterns": [
        {
            "name": "reversal-slips",
            "summary": "words reversed wrongly + read as a whole + spell letter by letter",
            "evidence": ["SHOWN"],
            "content": PAGE,
        }
    ],
    "update_patterns": [],
    "append_log": "Found reversal slips.",
}


def text(content: object) -> str:
    """A message's text, also when it is a list of parts (marked as a cache breakpoint)."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


class World:
    def __init__(self, trace_chars: int):
        self.reasoning = "I look at the word again and check each letter in turn. " * (trace_chars // 58)

    def __call__(self, body: dict) -> Reply | str:
        messages = body["messages"]
        system = text(messages[0]["content"])
        if system.startswith("You are a Wiki Maintainer Agent"):
            shown = re.search(r"^# Trace (\S+)", text(messages[1]["content"]), re.MULTILINE)
            return json.dumps(MAINTAINER).replace("SHOWN", shown.group(1))
        if system.startswith("You are a Skill Proposer Agent"):
            turn = sum(1 for message in messages if message["role"] == "assistant")
            if turn < len(TRAIN):
                return Reply(tool_calls=[{"name": "read_file", "arguments": {"path": f"traces/{TRAIN[turn]}"}}])
            number = int(re.search(r"Round (\d+)\.", text(messages[1]["content"])).group(1))
            proposal = PROPOSALS.get(number, {"action": "no_action", "rationale": "nothing left to try"})
            return Reply(tool_calls=[{"name": "finish", "arguments": {"proposal": proposal}}])
        return f"{self.reasoning}<answer>{self.answer(system, text(messages[-1]['content']))}</answer>"

    @staticmethod
    def answer(system: str, question: str) -> str:
        count = re.search(r"letter '(.)' occur in the word '(\w+)'", question)
        if count:
            return str(count.group(2).count(count.group(1)))
        word = re.search(r"Write the word '(\w+)' backwards", question).group(1)
        return word[::-1] if SPELL in system and len(word) <= 6 else word


def run(root: Path, cache: str, after: bool, rounds: int, kept: int, trace_chars: int) -> dict:
    """One workspace evolved `rounds` rounds; its figures per round."""
    with FakeOpenAIServer(World(trace_chars), prompt_cache=cache) as server:
        ws = api.init_workspace(root, benchmark="example-qa", model=MODEL, api_base=server.base_url, concurrency=4)
        path = ws.root / "wikiskill.yaml"
        config = yaml.safe_load(path.read_text())
        config.setdefault("llm", {})["cache_breakpoints"] = "always" if after else "off"
        config.setdefault("proposer", {}).update(kept_results_tokens=kept if after else None, max_turns=20)
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        started = time.perf_counter()
        api.evolve(api.open_workspace(ws.root), rounds)
        seconds = time.perf_counter() - started
    ws = api.open_workspace(root)
    log = {row.round: row for row in api.round_log(ws)}
    figures = {"seconds": seconds, "rounds": {}}
    for number in range(1, rounds + 1):
        roles: dict[str, list[int]] = {}
        for commit in ws.log("--all", first_parent=False):
            if commit.meta.round == number and commit.meta.step != Step.ROLLBACK:
                for role, tokens in commit.meta.role_tokens.items():
                    spent = roles.setdefault(role, [0, 0])
                    spent[0] += tokens
                    spent[1] += commit.meta.role_cached.get(role, 0)
        turns = json.loads(ws.read_file(MAIN, f"raw/{round_label(number)}/proposer.json"))["turns"]
        prompt = sum(turn["prompt_tokens"] for turn in turns)
        cached = sum(turn.get("cached_tokens", 0) for turn in turns)
        figures["rounds"][number] = {
            "roles": roles,
            "decision": f"{log[number].action} {log[number].skill} {log[number].decision}".strip(),
            "turns": len(turns),
            "prompt": prompt,
            "full_price": prompt - cached,
            "largest": max(turn["prompt_tokens"] for turn in turns),
            "cost": log[number].cost_usd,
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--kept", type=int, default=4000, help="proposer.kept_results_tokens after")
    parser.add_argument("--trace-chars", type=int, default=3000, help="characters of the agent's reasoning")
    args = parser.parse_args()
    import_litellm()  # its import (seconds) would count against the first run
    rows, roles_rows, checks = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        run(Path(tmp) / "warm-up", "prefix", False, 1, args.kept, args.trace_chars)  # first-use imports, untimed
        for cache in ("marked", "prefix"):
            results = {
                after: run(Path(tmp) / f"{cache}-{after}", cache, after, args.rounds, args.kept, args.trace_chars)
                for after in (False, True)
            }
            for after, figures in results.items():
                label = f"{cache} {'after' if after else 'before'}"
                for number, r in figures["rounds"].items():
                    rows.append(
                        [
                            label,
                            number,
                            r["decision"],
                            r["turns"],
                            r["prompt"],
                            r["full_price"],
                            r["largest"],
                            f"{r['cost']:.5f}",
                            f"{figures['seconds']:.1f}",
                        ]
                    )
                    for role, (tokens, cached) in sorted(r["roles"].items()):
                        roles_rows.append([label, number, role, tokens, cached, f"{cached / tokens:.0%}"])
            for number in results[False]["rounds"]:
                before, after = results[False]["rounds"][number], results[True]["rounds"][number]
                change = after["full_price"] / before["full_price"] - 1
                same = before["decision"] == after["decision"]
                checks.append(
                    f"{cache} round {number}: proposer's full-price prompt tokens {before['full_price']} -> "
                    f"{after['full_price']} ({change:+.0%}); same proposal and decision: {same}"
                )
    print(
        table(
            [
                "run",
                "round",
                "proposal and decision",
                "proposer turns",
                "proposer prompt",
                "billed in full",
                "largest prompt",
                "round cost $",
                "run s",
            ],
            rows,
        )
    )
    print()
    print(table(["run", "round", "role", "tokens", "cached", "cached share"], roles_rows))
    print()
    print("\n".join(checks))


if __name__ == "__main__":
    main()
