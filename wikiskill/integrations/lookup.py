"""`wikiskill search`: BM25 over the wiki's pattern pages, the skills, or the latest train traces.

Each hit is a workspace path, its score and the line that matches the query best."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ..core.errors import choice
from ..knowledge.lint import working_files
from ..knowledge.search import rank, words
from ..roles.sandbox import Sandbox
from ..store.workspace import MAIN, Workspace

SNIPPET_CHARS = 160


class Corpus(StrEnum):
    WIKI = "wiki"
    SKILLS = "skills"
    TRACES = "traces"


def corpus(name: str) -> Corpus:
    return choice(Corpus, name, "corpus")


@dataclass(frozen=True)
class Hit:
    path: str
    score: float
    snippet: str


def documents(ws: Workspace, corpus: Corpus, ref: str | None = MAIN) -> dict[str, str]:
    """`{workspace path: text}` of what `corpus` searches; ref None reads the working tree (traces
    always come from main's history)."""
    if corpus == Corpus.TRACES:
        sandbox = Sandbox(ws, ref or MAIN)
        found = {}
        for task_id, path in sandbox.traces.items():
            try:
                found[path] = sandbox.read(f"traces/{task_id}")[0]
            except LookupError:
                continue
        return found
    folder = "wiki/patterns" if corpus == Corpus.WIKI else "skills"
    if ref is None:
        files = working_files(ws.root, folder)
    else:
        files = {f"{folder}/{path}": text for path, text in ws.read_files(ref, folder).items()}
    suffix = ".md" if corpus == Corpus.WIKI else "/SKILL.md"
    return {path: text for path, text in files.items() if path.endswith(suffix)}


def search(
    ws: Workspace, query: str, corpus: Corpus = Corpus.WIKI, ref: str | None = MAIN, limit: int = 10
) -> list[Hit]:
    """The best `limit` matches for `query`, best first; only documents that share a word with it."""
    docs = documents(ws, corpus, ref)
    paths = sorted(docs)
    ranked = rank([docs[path] for path in paths], query)
    return [
        Hit(paths[index], score, snippet(docs[paths[index]], query)) for index, score in ranked[:limit] if score > 0
    ]


def snippet(text: str, query: str) -> str:
    """The line sharing the most words with the query, whitespace collapsed and cut short."""
    terms = set(words(query))
    lines = [line for line in text.splitlines() if line.strip()]
    best = max(lines, key=lambda line: len(terms & set(words(line))), default="")
    line = " ".join(best.split())
    return line if len(line) <= SNIPPET_CHARS else line[: SNIPPET_CHARS - 1] + "…"
