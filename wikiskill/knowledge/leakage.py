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

A held-out item too short for a run still has an answer a skill can quote: a text that pairs the
answers of two or more held-out items each with a cue of its question (a word of it that no train
task uses and fewer than three held-out questions share) within `leak_run` words is an answer
sheet (`maple -> ELPAM; tiger -> REGIT`), refused the same way. An answer made only of words the
train tasks use (a count, `yes`) is no secret and is not looked for.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
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
SHEET_ITEMS = 2
"""A text pairing this many held-out answers with their questions' cues is an answer sheet."""
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


@dataclass(frozen=True)
class Answered:
    """A held-out item's answer and the cues of its question: words that tell it from the others."""

    label: str
    """The item (`val task val-01`)."""
    answer: tuple[str, ...]
    cues: frozenset[str]


class HeldOut:
    """The runs of `length` words of held-out texts, each with where it came from, and the
    held-out answers an answer sheet would pair with their questions."""

    def __init__(
        self,
        length: int,
        held_out: Iterable[tuple[str, str, str]],
        public: Iterable[str] = (),
        answered: Iterable[Answered] = (),
    ):
        """`held_out`: (task id, what, text); `public`: texts whose runs are no secret."""
        self.length = length
        self.answered: dict[str, list[Answered]] = defaultdict(list)
        for item in answered:
            self.answered[item.answer[0]].append(item)
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

    def sheet(self, text: str) -> list[str]:
        """The held-out items whose answer `text` quotes within `length` words of a cue of its
        question, when there are `SHEET_ITEMS` or more of them; else none."""
        if not self.answered or self.length <= 0:
            return []
        found, items = words(text), set()
        for start, word in enumerate(found):
            for item in self.answered.get(word, ()):
                end = start + len(item.answer)
                near = found[max(start - self.length, 0) : start] + found[end : end + self.length]
                if tuple(found[start:end]) == item.answer and not item.cues.isdisjoint(near):
                    items.add(item.label)
        return sorted(items) if len(items) >= SHEET_ITEMS else []

    def reason(self, text: str) -> str | None:
        """Why `text` may not be in a skill: the first run of held-out text it shares, or the
        held-out items whose answers it lists."""
        found = self.leaks(text)
        if found:
            return f"{found[0]}" + (f" (and {len(found) - 1} more run(s))" if len(found) > 1 else "")
        items = self.sheet(text)
        if items:
            return f"pairs the answers of {', '.join(items)} with words of their questions (an answer sheet)"
        return None

    def problems(self, files: Mapping[str, str]) -> list[Problem]:
        """A problem per file of skills/ that shares held-out text, naming the first run, or lists
        held-out answers, naming the items."""
        problems = []
        for path, text in sorted(files.items()):
            reason = self.reason(text) if path.startswith("skills/") else None
            if reason:
                problems.append(Problem(path, f"held-out text in a skill: {reason}"))
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
    held_tasks = [task for split in HELD_OUT_SPLITS for task in tasks.get(split, [])]
    held = [text for task in held_tasks for text in task_texts(task)]
    public = [text for task in tasks.get("train", []) for _, _, text in task_texts(task)]
    return HeldOut(length, held, public, answered_items(held_tasks, {word for text in public for word in words(text)}))


def answered_items(held: list[Task], public: set[str]) -> list[Answered]:
    """The held-out items with an answer worth hiding (a word the train tasks do not use) and a
    question with cues."""
    shared = Counter(word for task in held for word in set(words(task.question)))
    items = []
    for task in held:
        answer = tuple(words(task.answer or ""))
        cues = frozenset(
            word for word in words(task.question) if word not in public and shared[word] < BOILERPLATE_TASKS
        )
        if cues and not public.issuperset(answer):
            items.append(Answered(f"{task.split} task {task.id}", answer, cues))
    return items


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
        reason = held_out.reason(text) if text is not None and path.startswith("skills/") else None
        if reason:
            return f"{path} {reason} (skills.leak_run {held_out.length}: held-out text kept out of skills)"
    return None


def workspace_held_out(root: Path) -> HeldOut:
    """The held-out index of the workspace at `root`, its suite loaded from its wikiskill.yaml."""
    from ..benchmarks.registry import load_benchmark
    from ..store.settings import load_config

    config = load_config(root)
    if config.skills.leak_run <= 0:
        return HeldOut(0, [])
    return suite_held_out(config, load_benchmark(config, root))
