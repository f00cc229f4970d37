"""The `bfcl` benchmark: BFCL v4 multi-turn function calling, from what `bfcl-eval` ships.

Each task is one BFCL entry: user turns, the functions of its simulated APIs (a file system, a
trading bot, a message service...) and their starting state. The agent's calls run against
BFCL's own backend classes through BFCL's own executor, and the finished conversation is judged
by BFCL's `multi_turn_checker` (the backends' end state and the calls' results against the ground
truth's, turn by turn), so a score here is BFCL's verdict: 1 or 0.

BFCL has no train/val/test split. Its entries are numbered per category (`multi_turn_base_17`);
the numbers are shuffled once with a fixed seed and dealt into three disjoint pools, so an entry
number, and every category's variant of it, belongs to one split only.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import json
import keyword
import os
import random
import re
import uuid
from functools import cache
from typing import Any

from ..core.resources import cache_root

# bfcl-eval writes result/, score/ and file locks under its project root, by default the folder it
# is installed in (site-packages, maybe read-only): point it into wikiskill's cache before it loads.
os.environ.setdefault("BFCL_PROJECT_ROOT", str(cache_root() / "bfcl"))

from bfcl_eval.constants.default_prompts import DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC
from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING
from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI
from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry

from ..core.errors import BenchmarkError
from .base import BenchmarkSpec, FunctionCall, Split, Task, UserTurn

SPLIT_SEED = "wikiskill-bfcl-1"
ENTRIES_PER_CATEGORY = 200
POOL_SIZES: dict[Split, int] = {"train": 60, "val": 40, "test": 100}
"""How many entry numbers each split's pool holds (the pools partition BFCL's 200)."""


@cache
def _entries(category: str) -> dict[str, dict[str, Any]]:
    return {entry["id"]: entry for entry in load_dataset_entry(f"multi_turn_{category}")}


@cache
def _ground_truth(category: str) -> dict[str, list[list[str]]]:
    return {entry["id"]: entry["ground_truth"] for entry in load_ground_truth_entry(f"multi_turn_{category}")}


def entry_pools() -> dict[Split, list[int]]:
    numbers = list(range(ENTRIES_PER_CATEGORY))
    random.Random(SPLIT_SEED).shuffle(numbers)
    pools, start = {}, 0
    for split, size in POOL_SIZES.items():
        pools[split] = numbers[start : start + size]
        start += size
    return pools


def openai_tool(doc: dict[str, Any]) -> dict[str, Any]:
    """A BFCL function doc as an OpenAI function tool (BFCL's own types mapped to JSON schema's)."""
    parameters = _schema(copy.deepcopy(doc["parameters"]))
    parameters["type"] = "object"
    return {
        "type": "function",
        "function": {"name": doc["name"], "description": doc.get("description", ""), "parameters": parameters},
    }


def _schema(node: dict[str, Any]) -> dict[str, Any]:
    if "type" in node:
        node["type"] = GORILLA_TO_OPENAPI.get(node["type"], "string")
    for value in node.get("properties", {}).values():
        _schema(value)
    if isinstance(node.get("items"), dict):
        _schema(node["items"])
    return node


def call_text(name: str, arguments: dict[str, Any]) -> str:
    """A call as BFCL's handlers decode a native tool call: `name(key=repr(value),...)`."""
    return f"{name}({','.join(f'{key}={value!r}' for key, value in arguments.items())})"


def _refusal(call: FunctionCall, available: set[str]) -> str | None:
    """Why a call is not run; calls that pass are plain literals and safe for BFCL's `eval`."""
    if call.name not in available:
        return f"Error during execution: no function named {call.name!r} is available."
    if not isinstance(call.arguments, dict):
        return "Error during execution: the arguments are not a JSON object."
    bad = [
        key
        for key in call.arguments
        if not (isinstance(key, str) and key.isidentifier() and not keyword.iskeyword(key))
    ]
    if bad:
        return f"Error during execution: invalid argument name(s) {', '.join(map(repr, bad))}."
    return None


class BfclSession:
    """One BFCL entry in play: its backends live in BFCL's executor under a name of their own."""

    def __init__(self, entry: dict[str, Any], ground_truth: list[list[str]]):
        self.entry = copy.deepcopy(entry)
        self.ground_truth = ground_truth
        self.category = self.entry["id"].rsplit("_", 1)[0]
        self.model_name = f"wikiskill_{uuid.uuid4().hex}"
        self.tools = [openai_tool(doc) for doc in self.entry["function"]]
        held_out = self.entry.get("missed_function", {})
        self.user_turns = []
        for index, messages in enumerate(self.entry["question"]):
            added = [openai_tool(doc) for doc in held_out.get(str(index), [])]
            content = "\n\n".join(m["content"] for m in messages) or DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC
            self.user_turns.append(UserTurn(content, added))
        self.steps: list[list[list[str]]] = [[] for _ in self.user_turns]
        """Per turn, per step, the calls run: what BFCL's checker replays."""

    def available(self, turn: int) -> set[str]:
        tools = self.tools + [tool for t in self.user_turns[: turn + 1] for tool in t.added_tools]
        return {tool["function"]["name"] for tool in tools}

    def execute(self, turn: int, calls: list[FunctionCall]) -> list[str]:
        available = self.available(turn)
        refusals = [_refusal(call, available) for call in calls]
        texts = [
            call_text(call.name, call.arguments)
            for call, refusal in zip(calls, refusals, strict=True)
            if refusal is None and call.arguments is not None
        ]
        ran = iter(self._run(texts) if texts else [])
        if texts:
            self.steps[turn].append(texts)
        return [refusal if refusal is not None else next(ran) for refusal in refusals]

    def _run(self, texts: list[str]) -> list[str]:
        results: list[str]
        results, _ = multi_turn_utils.execute_multi_turn_func_call(
            texts,
            self.entry["initial_config"],
            self.entry["involved_classes"],
            self.model_name,
            self.entry["id"],
            long_context="long_context" in self.category,
        )
        return results

    def score(self, answered_turns: int) -> float:
        """1.0 when BFCL's checker accepts the conversation; a conversation cut short fails, as in BFCL."""
        if answered_turns < len(self.user_turns):
            return 0.0
        try:
            verdict = multi_turn_checker(self.steps, self.ground_truth, self.entry, self.category, self.model_name)
        except AssertionError:
            return 0.0
        return 1.0 if verdict["valid"] else 0.0

    def close(self) -> None:
        """Drop this session's backend instances from BFCL's executor, which keeps them by name."""
        prefix = re.sub(r"[-./:]", "_", self.model_name)
        space = vars(multi_turn_utils)
        for name in [name for name in space if name.startswith(prefix)]:
            space.pop(name, None)


class Bfcl:
    """BFCL multi-turn entries of some categories, dealt into disjoint splits."""

    def __init__(self, categories: tuple[str, ...], counts: dict[Split, int], *, spec: BenchmarkSpec, name: str):
        self.categories = categories
        self.counts = counts
        self.spec = spec
        self.name = name
        for split, count in counts.items():
            room = POOL_SIZES[split] * len(categories)
            if count > room:
                raise BenchmarkError(f"{name}: {split} can hold at most {room} tasks, not {count}")

    def prepare(self, splits: tuple[Split, ...]) -> None:
        for category in self.categories:
            _entries(category)
            _ground_truth(category)

    def tasks(self, split: Split) -> list[Task]:
        ids = [f"multi_turn_{category}_{number}" for number in entry_pools()[split] for category in self.categories]
        tasks = []
        for entry_id in ids[: self.counts[split]]:
            category = entry_id.rsplit("_", 1)[0].removeprefix("multi_turn_")
            entry = _entries(category)[entry_id]
            tasks.append(
                Task(
                    id=entry_id,
                    split=split,
                    question=entry["question"][0][0]["content"],
                    metadata={"category": category},
                )
            )
        return tasks

    def open_session(self, task: Task) -> BfclSession:
        category = task.metadata["category"]
        return BfclSession(_entries(category)[task.id], _ground_truth(category)[task.id])

    def reference_calls(self, task: Task) -> list[list[FunctionCall]]:
        """The ground truth's calls per user turn, with positional arguments named as the backend's
        method names them: the known-good policy."""
        category = task.metadata["category"]
        classes = [_backend_class(name) for name in _entries(category)[task.id]["involved_classes"]]
        return [[_parse_call(text, classes) for text in turn] for turn in _ground_truth(category)[task.id]]


def _backend_class(name: str) -> type:
    backend: type = getattr(importlib.import_module(CLASS_FILE_PATH_MAPPING[name]), name)
    return backend


def _parse_call(text: str, classes: list[type]) -> FunctionCall:
    node = ast.parse(text, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a plain function call: {text}")
    name = node.func.id
    method = next(getattr(cls, name) for cls in classes if hasattr(cls, name))
    args = [ast.literal_eval(arg) for arg in node.args]
    kwargs: dict[str, Any] = {}
    for argument in node.keywords:
        if argument.arg is None:  # `**mapping`
            raise ValueError(f"not a plain function call: {text}")
        kwargs[argument.arg] = ast.literal_eval(argument.value)
    bound = inspect.signature(method).bind(None, *args, **kwargs)
    arguments = {key: value for key, value in bound.arguments.items() if key != "self"}
    return FunctionCall(name, json.loads(json.dumps(arguments)))
