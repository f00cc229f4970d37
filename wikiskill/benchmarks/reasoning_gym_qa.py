"""`reasoning-gym:<dataset>[,<dataset>...]`: reasoning-gym's procedurally generated QA, scored by
each dataset's own `score_answer`.

Splits never share a task. Each split draws from its own dataset seed (`SPLIT_SEEDS`), and
reasoning-gym makes item i from `Random(seed + i)`, so the splits' generators never meet while a
split draws fewer than `SEED_SPAN` items. Different generator seeds can still produce the same
question in a small problem space, so questions are also compared: test is drawn first, then
val skipping test's questions, then train skipping both (and each split skips its own repeats).
A dataset that cannot fill a split with distinct questions within its draw budget is refused.

A task keeps its dataset's entry (question, answer, metadata) in `Task.metadata["entry"]`, as
reasoning-gym made it: its scorers compare against that metadata (some against tuples).
"""

from __future__ import annotations

from functools import cache

import reasoning_gym
from reasoning_gym.dataset import ProceduralDataset
from reasoning_gym.factory import DATASETS

from wikiskill.benchmarks.base import BenchmarkSpec, Split, Task
from wikiskill.core.errors import BenchmarkError

SPLIT_SEEDS: dict[Split, int] = {"train": 1_000_000, "val": 2_000_000, "test": 3_000_000}
SEED_SPAN = 1_000_000
"""Items a split may draw before its generator seeds would reach the next split's."""

DRAWS_PER_TASK = 20
"""A split of n tasks may draw up to 20·n items (skipping repeats) before its dataset is refused."""

DRAW_ORDER: tuple[Split, ...] = ("test", "val", "train")
"""Test keeps its questions whatever the other splits' sizes; the splits drawn later skip them."""

NOT_PLAYABLE: dict[str, str] = {
    "composite": "it mixes other datasets from a config; name them instead: reasoning-gym:a,b",
    **{
        name: "its questions follow the process's string hash seed, so a task would change between runs"
        for name in ("isomorphic_strings", "knight_swap", "polynomial_multiplication", "ransom_note", "word_ladder")
    },
}
"""Datasets refused, and why (measured on reasoning-gym 0.1.25: the hash-seeded ones generate
different items under different PYTHONHASHSEED values)."""

LIST_NAMES = "python -c 'import reasoning_gym; print(sorted(reasoning_gym.factory.DATASETS))'"


def check_datasets(argument: str) -> list[str]:
    """The dataset names of `a,b,...` in order without repeats; BenchmarkError for one that cannot be used."""
    names = list(dict.fromkeys(name.strip() for name in argument.split(",") if name.strip()))
    if not names:
        raise BenchmarkError("reasoning-gym needs dataset names: reasoning-gym:<dataset>[,<dataset>...]")
    for name in names:
        if name in NOT_PLAYABLE:
            raise BenchmarkError(f"reasoning-gym dataset {name!r} cannot be used: {NOT_PLAYABLE[name]}")
        if name not in DATASETS:
            raise BenchmarkError(f"unknown reasoning-gym dataset {name!r}; list the valid names with: {LIST_NAMES}")
    return names


@cache
def _dataset(name: str, split: Split, draws: int) -> ProceduralDataset:
    return reasoning_gym.create_dataset(name, seed=SPLIT_SEEDS[split], size=draws)


def _shares(total: int, parts: int) -> list[int]:
    """`total` tasks dealt to `parts` datasets as evenly as possible, the first ones taking the rest."""
    return [total // parts + (1 if index < total % parts else 0) for index in range(parts)]


class ReasoningGymQA:
    """Tasks of one or more reasoning-gym datasets, dealt evenly and interleaved in each split."""

    def __init__(self, datasets: list[str], spec: BenchmarkSpec, counts: dict[Split, int]):
        for split, count in counts.items():
            if count * DRAWS_PER_TASK > SEED_SPAN:
                raise BenchmarkError(
                    f"reasoning-gym {split} split of {count} tasks is too large (at most {SEED_SPAN // DRAWS_PER_TASK})"
                )
        self.datasets = datasets
        self.name = spec.benchmark_name(",".join(datasets))
        self.spec = spec
        self.counts = counts
        self._tasks: dict[Split, list[Task]] | None = None

    def prepare(self, splits: tuple[Split, ...]) -> None:
        """Draws every split, whichever are asked for: a split's tasks depend on those drawn before it."""
        self._all_tasks()

    def tasks(self, split: Split) -> list[Task]:
        return list(self._all_tasks()[split])

    def score(self, task: Task, prediction: str | None) -> float:
        """The dataset's own score of `prediction` (0 when its scorer fails on it), clipped to 0..1."""
        dataset = _dataset(task.metadata["dataset"], task.split, task.metadata["draws"])
        try:
            score = float(dataset.score_answer(prediction, task.metadata["entry"]))
        except Exception:  # noqa: BLE001 - a model's answer may break a scorer in any way; it earns nothing
            return 0.0
        return min(max(score, 0.0), 1.0)

    def _all_tasks(self) -> dict[Split, list[Task]]:
        if self._tasks is None:
            seen: set[tuple[str, str]] = set()
            self._tasks = {split: self._draw(split, seen) for split in DRAW_ORDER}
        return self._tasks

    def _draw(self, split: Split, seen: set[tuple[str, str]]) -> list[Task]:
        shares = _shares(self.counts[split], len(self.datasets))
        per_dataset = [
            self._draw_dataset(name, split, count, seen) for name, count in zip(self.datasets, shares, strict=True)
        ]
        longest = max((len(tasks) for tasks in per_dataset), default=0)
        return [tasks[index] for index in range(longest) for tasks in per_dataset if index < len(tasks)]

    def _draw_dataset(self, name: str, split: Split, count: int, seen: set[tuple[str, str]]) -> list[Task]:
        if count == 0:
            return []
        draws = count * DRAWS_PER_TASK
        dataset = _dataset(name, split, draws)
        tasks: list[Task] = []
        for index in range(draws):
            entry = dataset[index]
            key = (name, entry["question"])
            if key in seen:
                continue
            seen.add(key)
            answer = entry.get("answer")
            tasks.append(
                Task(
                    id=f"{name}-{split}-{len(tasks):03d}",
                    split=split,
                    question=entry["question"],
                    answer=None if answer is None else str(answer),
                    metadata={"dataset": name, "draws": draws, "index": index, "entry": entry},
                )
            )
            if len(tasks) == count:
                return tasks
        raise BenchmarkError(
            f"reasoning-gym dataset {name!r} gave only {len(tasks)} distinct {split} questions "
            f"in {draws} draws (asked for {count}); ask for fewer tasks"
        )
