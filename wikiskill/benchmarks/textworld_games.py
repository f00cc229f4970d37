"""TextWorld games generated offline and played one command per turn, for every TextWorld challenge.

A challenge (`Challenge`: cooking, treasure hunter, ...) is its name, its generation settings and
how it makes a game; everything else is shared here. Games are generated in-process with the
challenge's `make` + `compile_game` (the `tw-make` CLI would pay the imports and the
knowledge-base load once per game). Each split owns a fixed, disjoint seed range, so a seed
always names the same game and train/val/test never share one.

Generation runs once and is cached on disk:

    $WIKISKILL_CACHE_DIR (else ~/.cache/wikiskill)/<challenge name>/<settings hash>/seed-<seed>.{json,z8}

The hash covers the challenge, its generation settings and the TextWorld version, so changing
any of them starts a fresh folder instead of mixing games. The `.json` sidecar holds what
TextWorld needs to track the game state (admissible commands, won/lost) and the walkthrough; the
`.z8` is the story file.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import re
import signal
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol

import textworld
from jericho.jericho import UnsupportedGameWarning
from textworld.generator import compile_game

from wikiskill.benchmarks.base import BenchmarkSpec, EnvStep, Split, Task
from wikiskill.core.lifeline import Lifeline, watch_parent
from wikiskill.core.resources import cache_root

Progress = Callable[[int, int], None]
"""Called as `progress(done, total)` after each newly generated game."""

SEED_BASES: dict[Split, int] = {"train": 1000, "val": 2000, "test": 3000}
"""Game i of a split is generated from seed SEED_BASES[split] + i."""

SEED_RANGE = 1000
"""A split holds at most this many games, which keeps the seed ranges disjoint."""


class Challenge(Protocol):
    """One kind of TextWorld game: what names it, what decides its games, and how one is made."""

    name: str
    """Its folder in the game cache, and the name its suite goes by."""
    textworld_challenge: str
    """TextWorld's name for it (`tw-cooking`); enters the cache key."""
    settings: dict[str, Any]
    """Everything besides the seed that decides a game; enters the cache key."""
    offline_playable: bool
    """Whether the offline model plays it (measured, see each challenge)."""

    def make(self, options: textworld.GameOptions) -> textworld.Game:
        """The game for `options` (its seed and output path are set)."""


CACHE_LAYOUT_VERSION = 1
"""Bump when the file layout or generation code changes, to regenerate every game."""

GENERATION_WORKERS = 2
"""Upper bound on generator processes (each runs the Inform 7 compiler, which is CPU bound)."""

POOL_MIN_GAMES = 4
"""Fewer missing games than this are generated in this process. A generator process first pays
the imports and TextWorld's knowledge-base load, which costs more than a second core saves on a
few games (`benchmarks/perf/textworld_generation.py` measures both ways)."""

# Jericho warns on every game it has no hand-written support for; TextWorld tracks the score and
# won/lost of its own games itself, so for ours the warning is noise.
warnings.filterwarnings(
    "ignore", message=r"Game '.*textworld-.*' is not fully supported", category=UnsupportedGameWarning
)

_REQUEST_INFOS = textworld.EnvInfos(
    admissible_commands=True, score=True, max_score=True, won=True, lost=True, objective=True
)


def settings_key(challenge: Challenge) -> str:
    """Hash of everything that decides what a seed generates."""
    spec = {
        "challenge": challenge.textworld_challenge,
        "settings": challenge.settings,
        "textworld": textworld.__version__,
        "layout": CACHE_LAYOUT_VERSION,
    }
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def games_dir(challenge: Challenge) -> Path:
    return cache_root() / challenge.name / settings_key(challenge)


def game_file(directory: Path, seed: int) -> Path:
    """The `.z8` story file of a seed; its `.json` sidecar sits next to it."""
    return directory / f"seed-{seed}.z8"


def ensure_games(challenge: Challenge, seeds: Sequence[int], progress: Progress | None = None) -> list[Path]:
    """The game file of each seed, generating the missing ones in parallel first."""
    directory = games_dir(challenge)
    directory.mkdir(parents=True, exist_ok=True)
    missing = [seed for seed in seeds if not game_file(directory, seed).is_file()]
    if missing:
        _generate_all(challenge, missing, directory, progress)
    return [game_file(directory, seed) for seed in seeds]


def _spawn_safe() -> bool:
    """`spawn` workers re-import the main module by path; a REPL or `python -` has none."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return path is None and getattr(main, "__spec__", None) is None or bool(path and Path(path).is_file())


def _generate_all(challenge: Challenge, seeds: list[int], directory: Path, progress: Progress | None) -> None:
    """Generate on every core (up to GENERATION_WORKERS), in `spawn` workers: forking a parent that
    may run threads can deadlock. A few games (under POOL_MIN_GAMES) are generated here instead.
    A seed decides its game wherever it is generated.

    Ctrl-C (or any error) here stops the workers at once: each removes its unfinished temporary
    folder and moves no game in. Workers also end with this process if it is killed.
    """
    if progress is not None:
        progress(0, len(seeds))
    workers = min(GENERATION_WORKERS, os.cpu_count() or 1, len(seeds))
    if workers == 1 or len(seeds) < POOL_MIN_GAMES or not _spawn_safe():
        for done, seed in enumerate(seeds, start=1):
            generate_game(challenge, seed, directory)
            if progress is not None:
                progress(done, len(seeds))
        return
    context = multiprocessing.get_context("spawn")
    lifeline = Lifeline(context)
    pool = context.Pool(workers, initializer=_generator_started, initargs=(lifeline.end,))
    try:
        jobs = pool.imap_unordered(_generate_seed, [(challenge, seed, directory) for seed in seeds])
        for done, _ in enumerate(jobs, start=1):
            if progress is not None:
                progress(done, len(seeds))
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
        lifeline.close()


def _generator_started(parent: Connection) -> None:
    """A generator process: ends with its parent; Ctrl-C is the parent's to handle (it stops the
    pool with SIGTERM, which unwinds the game in progress so its temporary folder is removed)."""
    watch_parent(parent)
    signal.signal(signal.SIGINT, lambda *_: None)
    signal.signal(signal.SIGTERM, _unwind)


def _unwind(*_: object) -> None:
    raise SystemExit(1)


def _generate_seed(job: tuple[Challenge, int, Path]) -> Path:
    return generate_game(*job)


def generate_game(challenge: Challenge, seed: int, directory: Path) -> Path:
    """Generate and compile the `challenge` game of `seed` into `directory`; returns its `.z8` file.

    Everything is built in a private temporary folder inside `directory` and then moved in with
    `os.replace`, the `.json` first and with interrupts held off between the two: a `.z8` in place
    therefore always has a complete sidecar, and a killed run leaves at most a `.tmp-*` folder
    that nothing loads. Two runs racing on the same seed each move in a complete game of that
    seed (the files may differ in the order of set-valued entries, which follows the process's
    hash seed, never in content), so any mix is fine.
    """
    target = game_file(directory, seed)
    with tempfile.TemporaryDirectory(dir=directory, prefix=".tmp-") as tmp:
        options = textworld.GameOptions()
        options.seeds = seed
        options.path = str(Path(tmp) / target.name)
        game = challenge.make(options)
        built = Path(compile_game(game, options))
        with _interrupts_held():
            os.replace(built.with_suffix(".json"), target.with_suffix(".json"))
            os.replace(built, target)
    return target


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait until the block is done (where the platform can hold signals)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _game_data(path: str | Path) -> dict[str, Any]:
    """The serialized game next to a `.z8`, read as plain JSON (`textworld.Game.load` builds far more)."""
    data: dict[str, Any] = json.loads(Path(path).with_suffix(".json").read_text())
    return data


def walkthrough(task: Task) -> list[str]:
    """The generator's winning command sequence for a task (kept out of `Task.metadata`)."""
    return list(_game_data(task.metadata["game_file"])["metadata"]["walkthrough"])


_BANNER = re.compile(r"\A(?:[ _|\\/$<>]*\n)+")  # the ASCII-art "TEXTWORLD" title at reset
_PROMPT_TAIL = re.compile(
    r"(?:\n[^\n]*RESTART, RESTORE a saved game, QUIT or UNDO[^\n]*)?"  # end-of-game menu
    r"\n>[^\n]*\s*\Z"  # the `>` prompt followed by the status bar `-= Kitchen =-3/10`
)
_BLANK_LINES = re.compile(r"\n{3,}")


def clean_observation(feedback: str) -> str:
    """TextWorld's feedback without the title art, the prompt + status bar and the restart menu."""
    text = _PROMPT_TAIL.sub("", _BANNER.sub("", feedback))
    text = "\n".join(line.strip() for line in text.splitlines())
    return _BLANK_LINES.sub("\n\n", text).strip()


_COMMAND_BREAK = re.compile(r"[\r\n.]|\bthen\b", re.IGNORECASE)


def single_command(action: str) -> str:
    """The first command of `action`, whitespace collapsed.

    Inform's parser runs `a. b`, `a then b` and multi-line input as several turns, but TextWorld
    reads one reply and tracks one action per step: the extra replies would come back as the
    answers to later steps and the tracked state (admissible commands, won/lost) would go stale.
    """
    return " ".join(_COMMAND_BREAK.split(action, maxsplit=1)[0].split())


_TEXTWORLD = threading.Lock()
"""TextWorld is not thread-safe (its game loader shares one parser), and agents run episodes in
threads; every call into it holds this lock. A step is short, so the lock costs little."""


class TextWorldEnv:
    """One TextWorld game behind the `TextEnv` protocol; the game process starts at `reset`."""

    def __init__(self, game_file: str | Path):
        self.game_file = str(game_file)
        self._env: textworld.Environment | None = None
        self._last: EnvStep | None = None

    def reset(self) -> EnvStep:
        with _TEXTWORLD:
            if self._env is None:
                self._env = textworld.start(self.game_file, request_infos=_REQUEST_INFOS)
            return self._record(self._env.reset(), done=False)

    def step(self, action: str) -> EnvStep:
        """Play one command. Unknown commands get the game's own reply ("That's not a verb I recognise.").

        After the game ended the final step is returned again: the interpreter would otherwise
        answer from its RESTART/QUIT menu, which TextWorld reports as a running game.
        """
        if self._env is None or self._last is None:
            raise RuntimeError("call reset() before step()")
        if self._last.done:
            return self._last
        with _TEXTWORLD:
            state, _, done = self._env.step(single_command(action))
            return self._record(state, done=done)

    def close(self) -> None:
        if self._env is not None:
            with _TEXTWORLD:
                self._env.close()
        self._env = None
        self._last = None

    def _record(self, state: textworld.GameState, done: bool) -> EnvStep:
        self._last = EnvStep(
            observation=clean_observation(state.feedback),
            score=float(state["score"]),  # TextWorld reports the cumulative score
            max_score=float(state["max_score"]),
            done=bool(done),
            won=bool(state["won"]),
            lost=bool(state["lost"]),
            admissible_actions=sorted(state["admissible_commands"]),
        )
        return self._last


class TextWorldGames:
    """The games of one challenge; games of a split are generated (once) on its first `tasks` call."""

    def __init__(
        self, challenge: Challenge, spec: BenchmarkSpec, counts: dict[Split, int], *, progress: Progress | None = None
    ):
        for split, count in counts.items():
            if not 0 <= count <= SEED_RANGE:
                raise ValueError(f"{split} must have 0..{SEED_RANGE} games, got {count}")
        self.challenge = challenge
        self.name = challenge.name
        self.spec = spec
        self.counts = counts
        self.progress = progress

    def seeds(self, split: Split) -> list[int]:
        base = SEED_BASES[split]
        return list(range(base, base + self.counts[split]))

    def prepare(self, splits: tuple[Split, ...]) -> None:
        """Generate the missing games of all these splits in one batch, under one progress bar."""
        ensure_games(self.challenge, [seed for split in splits for seed in self.seeds(split)], progress=self.progress)

    def tasks(self, split: Split) -> list[Task]:
        seeds = self.seeds(split)
        paths = ensure_games(self.challenge, seeds, progress=self.progress)
        return [
            Task(
                id=f"tw-{split}-{index:03d}",
                split=split,
                question=_game_data(path)["objective"],
                metadata={"game_file": str(path), "seed": seed},
            )
            for index, (seed, path) in enumerate(zip(seeds, paths, strict=True))
        ]

    def make_env(self, task: Task) -> TextWorldEnv:
        return TextWorldEnv(task.metadata["game_file"])

    def reference_actions(self, task: Task) -> list[str]:
        """The game's walkthrough: it wins."""
        return walkthrough(task)
