"""`jsonl:DIR` QA suites: train.jsonl, val.jsonl and test.jsonl with id, question, answer."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..errors import BenchmarkError
from .base import SPLITS, Split, Task
from .scoring import get_scorer

REQUIRED = ("id", "question", "answer")


class JsonlQA:
    """A QA suite read from a folder of JSONL files (loaded with `datasets`, fully offline).

    An optional `suite.json` in the folder sets `{"scorer": "exact|numeric|contains|regex|module:fn"}`.
    """

    agent_kind = "qa"

    def __init__(self, directory: Path, name: str | None = None):
        if not directory.is_dir():
            raise BenchmarkError(f"benchmark folder {directory} does not exist")
        self.directory = directory
        self.name = name or f"jsonl:{directory}"
        settings_path = directory / "suite.json"
        settings = json.loads(settings_path.read_text(encoding="utf-8")) if settings_path.is_file() else {}
        self.scorer = get_scorer(settings.get("scorer", "exact"))
        self._cache: dict[str, list[Task]] = {}

    def tasks(self, split: Split) -> list[Task]:
        if split not in SPLITS:
            raise BenchmarkError(f"unknown split {split!r}")
        if split not in self._cache:
            self._cache[split] = self._load(split)
        return self._cache[split]

    def _load(self, split: Split) -> list[Task]:
        path = self.directory / f"{split}.jsonl"
        if not path.is_file():
            raise BenchmarkError(f"{path} is missing")
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
        import datasets

        datasets.disable_progress_bars()
        try:
            rows = datasets.load_dataset("json", data_files=str(path), split="train", keep_in_memory=True)
        except Exception as exc:  # noqa: BLE001 - datasets raises many types for bad files
            raise BenchmarkError(f"{path}: cannot be read as JSON lines ({type(exc).__name__}: {exc})") from exc
        missing = [key for key in REQUIRED if key not in rows.column_names]
        if missing:
            raise BenchmarkError(f"{path}: every line needs {', '.join(REQUIRED)} (missing {', '.join(missing)})")
        tasks = [
            Task(
                id=str(row["id"]),
                split=split,
                question=str(row["question"]),
                answer=str(row["answer"]),
                metadata=row.get("metadata") or {},
            )
            for row in rows
        ]
        ids = [task.id for task in tasks]
        if len(set(ids)) != len(ids):
            raise BenchmarkError(f"{path}: task ids must be unique")
        return tasks

    def score(self, task: Task, prediction: str | None) -> float:
        return float(self.scorer(prediction, task.answer or ""))
