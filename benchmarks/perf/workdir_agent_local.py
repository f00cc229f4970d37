"""How often the built-in workdir agent changes a file on HumanEval-style task folders, with a
real model behind an OpenAI-compatible server (for manual checks only: no test or CI step runs it).

    # first start a local OpenAI-compatible server (llama.cpp, Ollama, vLLM), here on port 18080
    python benchmarks/perf/workdir_agent_local.py --api-base http://127.0.0.1:18080/v1 \
        [--model openai/qwen] [--protocol auto|native|text|bash_block] [--edit-format FORMAT]
        [--suite basic|humaneval] [--tasks 10] [--max-steps 6] [--traces DIR]

Each task is a folder whose solution.py holds a function's signature and docstring; a hidden
check in the suite folder (not in the working directory) runs its tests. The agent plays every
val task once in a fresh working directory; printed per task: whether it changed a file, whether
the check passed, how many model calls and tool calls it made, its tokens and how it ended, and
then the shares of the run.
Run it on two checkouts (e.g. `git stash` or main against a branch) to compare them: it uses
only the agent's long-standing API, `ShellAgent(model, skills, settings, max_steps).play` (and its
`protocol` for `--protocol bash_block`, its `edit_format` for `--edit-format`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from wikiskill.benchmarks.task_folders import TaskFolders
from wikiskill.core.config import LLMSettings, Role, RoleSettings, SkillsSettings, ToolProtocol
from wikiskill.core.errors import InfrastructureError
from wikiskill.llm.meter import Meter
from wikiskill.llm.model import LiteLLMModel
from wikiskill.roles.shell_agent import ShellAgent
from wikiskill.run.scorers import CommandScorer

FUNCTIONS = {
    "add-two": ("def add(a: int, b: int) -> int:", "Return the sum of a and b.", ["add(2, 3) == 5", "add(-1, 1) == 0"]),
    "is-even": ("def is_even(n: int) -> bool:", "Return True when n is even.", ["is_even(4)", "not is_even(7)"]),
    "reverse-words": (
        "def reverse_words(text: str) -> str:",
        "Return the words of text in reverse order, joined by single spaces.",
        ["reverse_words('a b c') == 'c b a'", "reverse_words('x') == 'x'"],
    ),
    "count-vowels": (
        "def count_vowels(text: str) -> int:",
        "Return how many of the letters of text are vowels (a, e, i, o, u, either case).",
        ["count_vowels('Hello') == 2", "count_vowels('xyz') == 0"],
    ),
    "max-of-list": (
        "def max_of(numbers: list[int]) -> int:",
        "Return the largest of numbers (never empty).",
        ["max_of([3, 9, 2]) == 9", "max_of([-5]) == -5"],
    ),
    "fizzbuzz": (
        "def fizzbuzz(n: int) -> str:",
        "Return 'Fizz' for multiples of 3, 'Buzz' for multiples of 5, 'FizzBuzz' for both, else str(n).",
        ["fizzbuzz(9) == 'Fizz'", "fizzbuzz(10) == 'Buzz'", "fizzbuzz(15) == 'FizzBuzz'", "fizzbuzz(7) == '7'"],
    ),
    "palindrome": (
        "def is_palindrome(text: str) -> bool:",
        "Return True when text reads the same backwards, ignoring case.",
        ["is_palindrome('Level')", "not is_palindrome('abc')"],
    ),
    "square-all": (
        "def squares(numbers: list[int]) -> list[int]:",
        "Return the square of each number, in order.",
        ["squares([1, 2, 3]) == [1, 4, 9]", "squares([]) == []"],
    ),
    "factorial": (
        "def factorial(n: int) -> int:",
        "Return n! (factorial(0) is 1).",
        ["factorial(0) == 1", "factorial(5) == 120"],
    ),
    "unique-sorted": (
        "def unique_sorted(items: list[int]) -> list[int]:",
        "Return the distinct items, sorted ascending.",
        ["unique_sorted([3, 1, 3, 2]) == [1, 2, 3]", "unique_sorted([]) == []"],
    ),
}
HUMANEVAL = {
    "close-elements": (
        "def has_close_elements(numbers: list[float], threshold: float) -> bool:",
        "Return True when any two of the numbers are closer to each other than threshold.",
        [
            "not has_close_elements([1.0, 2.0, 3.0], 0.5)",
            "has_close_elements([1.0, 2.8, 3.0, 4.0], 0.3)",
            "not has_close_elements([], 1.0)",
        ],
    ),
    "paren-groups": (
        "def separate_paren_groups(text: str) -> list[str]:",
        "text holds balanced groups of parentheses, possibly nested, possibly with spaces. Return each\n"
        "    top-level group as a string without spaces, in order.",
        [
            "separate_paren_groups('( ) (( )) (( )( ))') == ['()', '(())', '(()())']",
            "separate_paren_groups('()()') == ['()', '()']",
        ],
    ),
    "truncate": (
        "def truncate_number(value: float) -> float:",
        "Return the decimal part of a positive number (what is left after its integer part).",
        ["abs(truncate_number(3.5) - 0.5) < 1e-6", "abs(truncate_number(1.25) - 0.25) < 1e-6"],
    ),
    "below-zero": (
        "def below_zero(operations: list[int]) -> bool:",
        "A balance starts at zero; each operation adds to it (a deposit) or takes from it (a\n"
        "    withdrawal, negative). Return True when the balance ever falls below zero.",
        ["not below_zero([1, 2, 3])", "below_zero([1, 2, -4, 5])", "not below_zero([])"],
    ),
    "mean-deviation": (
        "def mean_absolute_deviation(numbers: list[float]) -> float:",
        "Return the mean of the absolute differences between each number and the numbers' mean.",
        ["abs(mean_absolute_deviation([1.0, 2.0, 3.0, 4.0]) - 1.0) < 1e-6", "mean_absolute_deviation([5.0]) == 0.0"],
    ),
    "intersperse": (
        "def intersperse(numbers: list[int], delimiter: int) -> list[int]:",
        "Return numbers with delimiter put between every two neighbours.",
        ["intersperse([], 4) == []", "intersperse([1, 2, 3], 4) == [1, 4, 2, 4, 3]"],
    ),
    "nesting-depth": (
        "def max_depths(text: str) -> list[int]:",
        "text holds groups of nested parentheses separated by spaces. Return each group's deepest\n"
        "    level of nesting, in order.",
        ["max_depths('(()()) ((())) () ((())()())') == [2, 3, 1, 3]", "max_depths('(((())))') == [4]"],
    ),
    "sum-product": (
        "def sum_product(numbers: list[int]) -> tuple[int, int]:",
        "Return the sum and the product of the numbers; no numbers give (0, 1).",
        ["sum_product([]) == (0, 1)", "sum_product([1, 2, 3, 4]) == (10, 24)"],
    ),
    "rolling-max": (
        "def rolling_max(numbers: list[int]) -> list[int]:",
        "Return the list whose item i is the largest of numbers[0] to numbers[i].",
        ["rolling_max([]) == []", "rolling_max([1, 2, 3, 2, 3, 4, 2]) == [1, 2, 3, 3, 3, 4, 4]"],
    ),
    "shortest-palindrome": (
        "def make_palindrome(text: str) -> str:",
        "Return the shortest palindrome that begins with text.",
        ["make_palindrome('') == ''", "make_palindrome('cat') == 'catac'", "make_palindrome('cata') == 'catac'"],
    ),
}
SUITES = {"basic": FUNCTIONS, "humaneval": HUMANEVAL}
"""`basic`: one-line functions; `humaneval`: problems in the style of OpenAI's HumanEval (written
for this script, with their own hidden tests)."""
CHECK = """import json, os, sys
from pathlib import Path
tests = json.loads((Path(os.environ["WIKISKILL_SUITE_DIR"]) / "hidden" / (Path(os.environ["WIKISKILL_TASK_DIR"]).name
                    + ".json")).read_text())
sys.path.insert(0, os.getcwd())
from solution import *  # noqa
failed = [test for test in tests if not eval(test)]
print("failed:", failed) if failed else print("all passed")
sys.exit(1 if failed else 0)
"""


def write_suite(root: Path, count: int, problems: dict = FUNCTIONS) -> TaskFolders:
    (root / "hidden").mkdir(parents=True)
    check = root.resolve() / "check.py"
    (root / "suite.yaml").write_text(f"scorer: command\ncommand: {sys.executable} {check}\ntimeout: 30\n")
    (root / "check.py").write_text(CHECK)
    for split in ("train", "test"):
        placeholder = root / split / f"unused-{split}"
        (placeholder / "files").mkdir(parents=True)
        (placeholder / "task.md").write_text("unused")
    for task_id, (signature, doc, tests) in list(problems.items())[:count]:
        folder = root / "val" / task_id
        (folder / "files").mkdir(parents=True)
        (folder / "task.md").write_text("Implement the function in solution.py as its docstring says.")
        (folder / "files" / "solution.py").write_text(f'{signature}\n    """{doc}"""\n    raise NotImplementedError\n')
        (root / "hidden" / f"{task_id}.json").write_text(json.dumps(tests))
    return TaskFolders(root)


def changed(before: Path, after: Path) -> bool:
    def files(root: Path) -> dict[str, bytes]:
        return {
            str(p.relative_to(root)): p.read_bytes()
            for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }

    return files(before) != files(after)


async def play_one(agent: ShellAgent, scorer: CommandScorer, task, scratch: Path, traces: Path | None) -> dict:
    workdir = scratch / task.id
    shutil.copytree(task.files, workdir)
    started = time.monotonic()
    trajectory = await agent.play(task, workdir)
    try:
        passed, infra = scorer.score(task, trajectory, workdir).value == 1.0, None
    except InfrastructureError as exc:  # e.g. the check's own code failing on a function renamed
        passed, infra = False, str(exc)
    if traces is not None:
        (traces / f"{task.id}.txt").write_text(trajectory.render())
    calls = sum(1 for m in trajectory.messages if m.get("role") == "assistant")
    tools = sum(len(m.get("tool_calls") or []) for m in trajectory.messages if m.get("role") == "assistant")
    tools += sum(
        1
        for m in trajectory.messages[1:]
        if m.get("role") == "user"  # results of the bash-block protocol
        and str(m.get("content") or "").startswith(("exit code", "killed after"))
    )
    return {
        "task": task.id,
        "changed": changed(task.files, workdir),
        "passed": passed,
        "replies": calls,
        "actions": tools,
        "tokens": trajectory.usage.tokens,
        "error": trajectory.error,
        "failure": "infra" if infra else trajectory.failure.value if trajectory.failure else None,
        "infra": infra,
        "seconds": time.monotonic() - started,
    }


async def run_all(args: argparse.Namespace) -> list[dict]:
    settings = {
        "model": args.model,
        "api_base": args.api_base,
        "max_tokens": args.max_tokens,
        "context_window": args.context_window,
        "tool_protocol": args.protocol,
    }
    model = LiteLLMModel(RoleSettings(**settings), LLMSettings(timeout=args.timeout, retries=1), Role.AGENT, Meter())
    with tempfile.TemporaryDirectory(prefix="workdir-agent-local-") as scratch:
        suite = write_suite(Path(scratch) / "suite", args.tasks, SUITES[args.suite])
        scorer = CommandScorer(suite.command, suite.scoring, suite.directory)
        # `protocol` is the agent's own setting since the bash-block protocol; older checkouts lack it
        chosen: dict = {"protocol": ToolProtocol(args.protocol)} if args.protocol == "bash_block" else {}
        if args.edit_format is not None:  # the agent's own setting since fenced-block edits
            chosen["edit_format"] = args.edit_format
        agent = ShellAgent(model, [], SkillsSettings(), args.max_steps, **chosen)
        limit = asyncio.Semaphore(args.concurrency)

        async def bounded(task):
            async with limit:
                row = await play_one(agent, scorer, task, Path(scratch), args.traces)
                print(json.dumps(row), flush=True)
                return row

        return await asyncio.gather(*(bounded(task) for task in suite.tasks("val")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--model", default="openai/qwen")
    parser.add_argument("--protocol", default="auto")
    parser.add_argument("--edit-format", default=None, help="tools, whole, diff or auto (the agent's default)")
    parser.add_argument("--suite", choices=sorted(SUITES), default="basic")
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--max-steps", type=int, default=6)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--context-window", type=int, default=16384)
    parser.add_argument("--traces", type=Path, default=None, help="a folder to write each task's trace to")
    args = parser.parse_args()
    if args.traces is not None:
        args.traces.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    rows = asyncio.run(run_all(args))
    total = len(rows)
    print(
        f"suite {args.suite}, protocol {args.protocol}, edit format {args.edit_format or 'default'}: "
        f"changed a file {sum(r['changed'] for r in rows)}/{total}, "
        f"check passed {sum(r['passed'] for r in rows)}/{total}, "
        f"actions {sum(r['actions'] for r in rows)}, model replies {sum(r['replies'] for r in rows)}, "
        f"tokens per task {sum(r['tokens'] for r in rows) / max(total, 1):.0f}, "
        f"stuck {sum(r['failure'] == 'stuck' for r in rows)}, infra {sum(r['failure'] == 'infra' for r in rows)}, "
        f"{time.monotonic() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
