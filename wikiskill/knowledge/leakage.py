"""Held-out text kept out of skills: a skill that quotes val or test material (a question, an
answer, an instruction, a hidden test file) raises the val score without teaching anything, and
the gate would merge it. Any text that shares a run of `skills.leak_run` words (8 by default) with
held-out material is refused before a val task runs (a proposal), reported (`lint`, `watch`) or
not ingested (a session), naming the run it shares.

Texts are compared as runs of lower-case words (letters and digits): every run of `leak_run`
consecutive words of the held-out material is hashed into a set once, and a text is checked in
one pass over its own runs. A run that the train tasks share is no secret (the proposer sees
train), and neither is one that three or more held-out tasks share (a template or boilerplate, as
in "Answer with the reversed word only"): both are left out of the set.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..benchmarks import SPLITS, Benchmark, BenchmarkKind, Split, Task
from ..benchmarks.harbor import TASK_DIR_KEY
from ..core.config import Config
from .lint import Problem

WORD = re.compile(r"[a-z0-9]+")
HELD_OUT_SPLITS: tuple[Split, ...] = ("val", "test")
BOILERPLATE_TASKS = 3
"""A run shared by this many held-out tasks is a template, not a secret."""
HIDDEN_FOLDERS = ("tests", "solution")
"""Folders of a task directory the agent never sees (Harbor's verifier and reference solution)."""
MAX_FILE_BYTES = 200_000
SHOWN_WORDS = 16


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def runs(found: list[str], length: int) -> Iterable[int]:
    return (hash(tuple(found[start : start + length])) for start in range(len(found) - length + 1))


@dataclass(frozen=True)
class Leak:
    """A run of words a text shares with held-out material."""

    text: str
    """The shared words, cut to a few for the message."""
    source: str
    """Where the held-out text is (`val task val-01's question`)."""

    def __str__(self) -> str:
        return f'shares "{self.text}" with {self.source}'


class HeldOut:
    """The runs of `length` words of held-out texts, each with where it came from."""

    def __init__(self, length: int, held_out: Iterable[tuple[str, str, str]], public: Iterable[str] = ()):
        """`held_out`: (task id, what, text); `public`: texts whose runs are no secret."""
        self.length = length
        sources: dict[int, str] = {}
        tasks: dict[int, set[str]] = defaultdict(set)
        for task, what, text in held_out:
            for run in runs(words(text), length):
                sources.setdefault(run, what)
                tasks[run].add(task)
        known = {run for text in public for run in runs(words(text), length)}
        self.sources = {
            run: source for run, source in sources.items() if run not in known and len(tasks[run]) < BOILERPLATE_TASKS
        }

    def leaks(self, text: str) -> list[Leak]:
        """Each maximal stretch of `text` made of held-out runs, once per stretch."""
        if not self.sources or self.length <= 0:
            return []
        found, leaks = words(text), []
        start = end = -1
        source = ""
        for index, run in enumerate(runs(found, self.length)):
            if run not in self.sources:
                continue
            if index > end:
                if start >= 0:
                    leaks.append(_leak(found, start, end, source))
                start, source = index, self.sources[run]
            end = index + self.length - 1
        if start >= 0:
            leaks.append(_leak(found, start, end, source))
        return leaks

    def problems(self, files: Mapping[str, str]) -> list[Problem]:
        """A problem per file of skills/ that shares held-out text, naming the first run."""
        problems = []
        for path, text in sorted(files.items()):
            if path.startswith("skills/"):
                found = self.leaks(text)
                if found:
                    more = f" (and {len(found) - 1} more run(s))" if len(found) > 1 else ""
                    problems.append(Problem(path, f"held-out text in a skill: {found[0]}{more}"))
        return problems


def _leak(found: list[str], start: int, end: int, source: str) -> Leak:
    shared = found[start : end + 1]
    text = " ".join(shared[:SHOWN_WORDS]) + (" …" if len(shared) > SHOWN_WORDS else "")
    return Leak(text, source)


def task_texts(task: Task) -> Iterable[tuple[str, str, str]]:
    """(task id, where, text) of everything about a task an agent must not be told: its question or
    instruction, its answer, text in its metadata (a rubric, expectations) and its hidden files."""
    label = f"{task.split} task {task.id}"
    yield task.id, f"{label}'s question", task.question
    if task.answer:
        yield task.id, f"{label}'s answer", task.answer
    for key, value in task.metadata.items():
        if isinstance(value, str) and key != TASK_DIR_KEY:
            yield task.id, f"{label}'s {key}", value
    folder = task.metadata.get(TASK_DIR_KEY)
    if isinstance(folder, str):
        for hidden in HIDDEN_FOLDERS:
            for path in sorted((Path(folder) / hidden).rglob("*")):
                text = _text_of(path)
                if text:
                    yield task.id, f"{label}'s {hidden}/{path.relative_to(Path(folder) / hidden)}", text


def _text_of(path: Path) -> str | None:
    if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_FILE_BYTES:
        return None
    data = path.read_bytes()
    return None if b"\0" in data else data.decode("utf-8", errors="replace")


def held_out_index(length: int, tasks: Mapping[Split, list[Task]]) -> HeldOut:
    """The index of the val and test tasks' texts, less the runs the train tasks share."""
    held = [text for split in HELD_OUT_SPLITS for task in tasks.get(split, []) for text in task_texts(task)]
    public = [text for task in tasks.get("train", []) for _, _, text in task_texts(task)]
    return HeldOut(length, held, public)


def suite_held_out(config: Config, benchmark: Benchmark) -> HeldOut:
    """The held-out index of a workspace's suite under `skills.leak_run`. Interactive suites are
    left out: their objectives are generated from a few templates, and reading their test tasks
    would generate every test game."""
    if config.skills.leak_run <= 0 or benchmark.spec.kind is BenchmarkKind.INTERACTIVE:
        return HeldOut(0, [])
    return held_out_index(config.skills.leak_run, {split: benchmark.tasks(split) for split in SPLITS})


def leak_reason(held_out: HeldOut, changes: Mapping[str, str | None]) -> str | None:
    """Why a proposal's files are refused: the first run of held-out text one of them shares."""
    for path, text in sorted(changes.items()):
        if text is not None and path.startswith("skills/"):
            found = held_out.leaks(text)
            if found:
                return f"{path} {found[0]} (skills.leak_run {held_out.length}: held-out text kept out of skills)"
    return None


def workspace_held_out(root: Path) -> HeldOut:
    """The held-out index of the workspace at `root`, its suite loaded from its wikiskill.yaml."""
    from ..benchmarks.registry import load_benchmark
    from ..store.settings import load_config

    config = load_config(root)
    if config.skills.leak_run <= 0:
        return HeldOut(0, [])
    return suite_held_out(config, load_benchmark(config, root))
