"""`jsonl:DIR` QA suites: train.jsonl, val.jsonl and test.jsonl with id, question, answer."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from ..core.errors import BenchmarkError
from ..core.text import read_utf8
from .base import SPLITS, BenchmarkSpec, Split, Task
from .scoring import get_scorer
from .specs import JSONL

REQUIRED = ("id", "question", "answer")


def check_split_file(path: Path) -> int:
    """Refuse, naming the file and line, what would otherwise fail mid-run; returns the task count.

    Every line must be a JSON object with `id`, `question` and `answer` (text or a number),
    ids must be unique, and the split must hold at least one task.
    """
    if not path.is_file():
        raise BenchmarkError(f"{path} is missing")
    first_line: dict[str, int] = {}
    try:
        lines = read_utf8(path, BenchmarkError).splitlines()
    except OSError as exc:
        raise BenchmarkError(f"{path}: cannot be read ({exc})") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BenchmarkError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from exc
        if not isinstance(row, dict):
            raise BenchmarkError(f"{where}: must be a JSON object with {', '.join(REQUIRED)}")
        for key in REQUIRED:
            value = row.get(key)
            if value is None:
                raise BenchmarkError(f"{where}: missing {key!r} (every line needs {', '.join(REQUIRED)})")
            if isinstance(value, (dict, list, bool)):
                raise BenchmarkError(f"{where}: {key!r} must be text or a number")
        task_id = str(row["id"])
        if task_id in first_line:
            raise BenchmarkError(f"{where}: duplicate id {task_id!r} (first on line {first_line[task_id]})")
        first_line[task_id] = number
    if not first_line:
        raise BenchmarkError(f"{path}: no tasks (the split is empty)")
    return len(first_line)


class JsonlQA:
    """A QA suite read from a folder of JSONL files (loaded with `datasets`, fully offline).

    Every split file is checked when the suite is opened, so a broken line is refused before any
    model call. An optional `suite.json` in the folder sets
    `{"scorer": "exact|numeric|contains|regex|module:fn"}`.
    """

    def __init__(self, directory: Path, name: str | None = None, spec: BenchmarkSpec | None = None):
        if not directory.is_dir():
            raise BenchmarkError(f"benchmark folder {directory} does not exist")
        self.directory = directory
        self.name = name or f"jsonl:{directory}"
        self.spec = spec or JSONL
        self.scorer = get_scorer(_suite_settings(directory / "suite.json").get("scorer", "exact"))
        for split in SPLITS:
            check_split_file(directory / f"{split}.jsonl")
        self._cache: dict[str, list[Task]] = {}

    def tasks(self, split: Split) -> list[Task]:
        if split not in SPLITS:
            raise BenchmarkError(f"unknown split {split!r}")
        if split not in self._cache:
            self._cache[split] = self._load(split)
        return self._cache[split]

    def prepare(self, splits: tuple[Split, ...]) -> None:
        for split in splits:
            self.tasks(split)

    def _load(self, split: Split) -> list[Task]:
        path = self.directory / f"{split}.jsonl"
        check_split_file(path)  # again: the file may have changed since the suite was opened
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
        import datasets

        datasets.disable_progress_bars()
        logging.getLogger("datasets").setLevel(logging.CRITICAL)  # its errors reach the user as ours
        try:
            rows = datasets.load_dataset("json", data_files=str(path), split="train", keep_in_memory=True)
        except Exception as exc:  # noqa: BLE001 - datasets raises many types for bad files
            raise BenchmarkError(f"{path}: cannot be read as JSON lines ({type(exc).__name__}: {exc})") from exc
        return [
            Task(
                id=str(row["id"]),
                split=split,
                question=str(row["question"]),
                answer=str(row["answer"]),
                metadata=row.get("metadata") or {},
            )
            for row in rows
        ]

    def score(self, task: Task, prediction: str | None) -> float:
        return float(self.scorer(prediction, task.answer or ""))


def _suite_settings(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        settings = json.loads(read_utf8(path, BenchmarkError))
    except json.JSONDecodeError as exc:
        raise BenchmarkError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(settings, dict):
        raise BenchmarkError(f'{path}: must be a JSON object such as {{"scorer": "exact"}}')
    return settings
