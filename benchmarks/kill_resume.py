"""Kill `wikiskill evolve` with SIGKILL at random points and check that re-running it resumes cleanly.

    python benchmarks/kill_resume.py [--points 50] [--seed 0] [--latency 0.03] [--kills 1] [--keep DIR]

The scripted OpenAI-compatible world of the test suite (tests/scripted.py) is served from this
process with a small per-request latency, so kills land mid-step. A reference workspace runs
`wikiskill evolve --rounds 2` uninterrupted. Then, for each point, a fresh workspace runs the
same command as a subprocess, its process group is SIGKILLed at a trigger drawn from a seeded
RNG, and `evolve --rounds K` is re-run, K being the rounds still missing (`--rounds N` means N
more from now, the cut-off round counting as the first), until it exits or all rounds are
tagged (a run killed after its last round's tag has finished). A point resumed cleanly when:

- the history has the reference's shape: the (Round, Step, Decision, Skill, Score) trailers, the
  raw/ files (but the role transcripts, which quote commit ids) and the skills/ and wiki page
  trees of every commit on `git log --first-parent main`, the side branches of merges, the tags
  (and what rejected tags hold); no branch is left over;
- `git fsck --full` is clean, the working tree is clean and no sync marker is left;
- no finished per-task result was recomputed: every task is in its step's result journal
  exactly once, and the task agent got at most the reference's requests plus the ones in
  flight at each kill.

Triggers (k counts events seen by polling the workspace every millisecond):
  time:<s>    s seconds after the start
  ref:<k>     right after the k-th update of a branch or tag
  import:<k>  when the k-th commit's objects are being written (git fast-import's temporary pack
              appears): mid-commit, before the ref moves
  marker:<k>  when the k-th sync marker appears: around the ref move, before the tree is synced
  result:<k>  once k more per-task results are cached (mid-rollout or mid-validation)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the scripted world
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import, here or in runs
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

from scripted import ScriptedWorld  # noqa: E402
from wikiskill.api import init_workspace  # noqa: E402
from wikiskill.testing.fakeserver import FakeOpenAIServer  # noqa: E402

ROUNDS = 2
CONCURRENCY = 4
AGENT_PROMPT = "You are a careful problem solver"
KINDS = ("time", "ref", "import", "marker", "result")
RUN_TIMEOUT = 300.0


def wikiskill_command() -> list[str]:
    script = Path(sys.executable).with_name("wikiskill")
    return [str(script)] if script.exists() else [shutil.which("wikiskill") or "wikiskill"]


def git(ws: Path, *args: str, check: bool = True) -> str:
    return subprocess.run(["git", "-C", str(ws), *args], check=check, capture_output=True, text=True).stdout


# -- what a finished workspace looks like ---------------------------------------------------------

TREES = ("skills", "wiki/patterns", "wiki/index.md", "wiki/log.md")
KEYS = ("Round", "Step", "Decision", "Skill", "Score")
# Role transcripts record prompts that quote commit ids (skill-impact.md names the merged tip), and
# commit ids differ between runs as dates do; every other file under raw/ must be identical.
TRANSCRIPT = re.compile(r"^raw/r\d{3}/(maintainer|proposer)\.json$")


def _raw_files(ws: Path, sha: str) -> tuple[str, ...]:
    """(blob id, path) of every file under raw/ at `sha` but the role transcripts."""
    listing = git(ws, "ls-tree", "-r", sha, "--", "raw", check=False).splitlines()
    return tuple(line.split(" ", 2)[2] for line in listing if not TRANSCRIPT.match(line.split("\t", 1)[-1]))


def _commits(ws: Path, *rev: str) -> list[tuple]:
    """(trailers..., trees...) of each commit, oldest first."""
    fmt = "%H%x1f%P%x1f%(trailers:only,unfold)%x1e"
    rows = []
    for record in git(ws, "log", "--reverse", f"--format={fmt}", *rev).split("\x1e"):
        if not record.strip():
            continue
        sha, parents, trailer_text = record.strip("\n").split("\x1f")
        trailers = dict(line.split(": ", 1) for line in trailer_text.splitlines() if ": " in line)
        trees = git(ws, "rev-parse", *(f"{sha}:{path}" for path in TREES), check=False).split()
        rows.append(
            (*(trailers.get(f"Wikiskill-{key}") for key in KEYS), len(parents.split()), *trees, _raw_files(ws, sha))
        )
    return rows


def signature(ws: Path) -> dict:
    """Everything that must be identical between an interrupted-and-resumed run and the reference."""
    main = git(ws, "rev-list", "--first-parent", "--reverse", "main").split()
    position = {sha: index for index, sha in enumerate(main)}
    sides = [_commits(ws, f"{sha}^1..{sha}^2") for sha in main if len(git(ws, "rev-parse", f"{sha}^@").split()) == 2]
    tags = {}
    for line in git(ws, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/tags").splitlines():
        name, sha = line.split()
        tags[name] = position.get(sha, _commits(ws, f"main..{sha}"))
    return {
        "main": _commits(ws, "--first-parent", "main"),
        "sides": sides,
        "tags": tags,
        "branches": git(ws, "for-each-ref", "--format=%(refname)", "refs/heads").split(),
    }


def consistency_problems(ws: Path) -> list[str]:
    """Problems of a finished workspace."""
    problems = []
    fsck = subprocess.run(
        ["git", "-C", str(ws), "fsck", "--full", "--no-dangling", "--no-progress"], capture_output=True, text=True
    )
    if fsck.returncode != 0 or fsck.stdout.strip():
        problems.append(f"git fsck: {(fsck.stdout + fsck.stderr).strip()[:300]}")
    status = git(ws, "status", "--porcelain", "--untracked-files=all")
    if status.strip():
        problems.append(f"working tree not clean: {status.strip()[:300]}")
    if (ws / ".wikiskill" / "sync.json").exists():
        problems.append(".wikiskill/sync.json left behind")
    return problems


def cached_results(ws: Path) -> Counter[tuple[str, str]]:
    """How often each (step cache, task) is in the result journals: a recomputed task would be
    there twice (a line that a kill cut short does not parse and is not counted)."""
    counts: Counter[tuple[str, str]] = Counter()
    for path in (ws / ".wikiskill" / "results").glob("*/*.jsonl"):
        for line in path.read_bytes().splitlines():
            try:
                counts[(path.parent.name, json.loads(line)["task_id"])] += 1
            except (ValueError, KeyError, TypeError):
                continue
    return counts


class ResultLines:
    """Complete lines in the result journals, counted incrementally (it is polled every ms)."""

    def __init__(self, ws: Path):
        self.folder = ws / ".wikiskill" / "results"
        self.seen: dict[Path, tuple[int, int]] = {}  # journal -> (bytes read, newlines in them)

    def count(self) -> int:
        for path in self.folder.glob("*/*.jsonl"):
            offset, lines = self.seen.get(path, (0, 0))
            with open(path, "rb") as journal:
                journal.seek(offset)
                chunk = journal.read()
            self.seen[path] = (offset + len(chunk), lines + chunk.count(b"\n"))
        return sum(lines for _, lines in self.seen.values())


# -- watching and killing -----------------------------------------------------------------------


class Watcher:
    """Counts what a running evolve does to its workspace, by polling the file system.

    Counts are approximate (an event shorter than a poll can be missed or seen twice), which
    only moves a kill a little; every point is a valid kill point.
    """

    def __init__(self, ws: Path):
        self.ws = ws
        self.counts: Counter[str] = Counter()
        self._refs = self._read_refs()
        self._marker = False
        self._packs: set[str] = set()
        self._results = ResultLines(ws)
        self._results_before = self._results.count()

    def _read_refs(self) -> dict[str, bytes]:
        refs = {}
        for folder in ("heads", "tags"):
            for root, _, files in os.walk(self.ws / ".git" / "refs" / folder):
                for name in files:
                    if name.endswith(".lock"):
                        continue  # git's transient lock files, not ref updates
                    try:
                        refs[os.path.join(root, name)] = Path(root, name).read_bytes()
                    except (FileNotFoundError, IsADirectoryError):
                        pass
        return refs

    def poll(self) -> None:
        refs = self._read_refs()
        self.counts["ref"] += sum(
            1 for name in refs.keys() | self._refs.keys() if refs.get(name) != self._refs.get(name)
        )
        self._refs = refs
        state = self.ws / ".wikiskill"
        marker = (state / "sync.json").exists()
        self.counts["marker"] += marker and not self._marker
        self._marker = marker
        try:
            packs = {name for name in os.listdir(self.ws / ".git" / "objects" / "pack") if name.startswith("tmp_pack_")}
        except FileNotFoundError:
            packs = set()
        self.counts["import"] += len(packs - self._packs)
        self._packs = packs
        self.counts["result"] = self._results.count() - self._results_before

    def fired(self, trigger: str, elapsed: float) -> bool:
        kind, value = trigger.split(":")
        return elapsed >= float(value) if kind == "time" else self.counts[kind] >= int(value)


@dataclass
class Run:
    exit_code: int | None  # None: killed
    seconds: float
    stdout: str
    stderr: str
    counts: Counter = field(default_factory=Counter)


def evolve_argv(ws: Path, *extra: str) -> list[str]:
    """`evolve --rounds ROUNDS`, or the `--rounds` that `extra` names."""
    rounds = () if "--rounds" in extra else ("--rounds", str(ROUNDS))
    return ["-C", str(ws), "evolve", *rounds, *extra]


def completed_rounds(ws: Path) -> int:
    return max((int(tag.removeprefix("round/")) for tag in git(ws, "tag", "--list", "round/*").split()), default=0)


def rounds_left(ws: Path, total: int = ROUNDS) -> int:
    """The `--rounds` that makes `total` rounds in all: `--rounds N` means N more completed rounds
    from now, a round a killed run left unfinished counting as the first of them."""
    return total - completed_rounds(ws)


def start_cli(ws: Path, output: Path, *extra: str):
    """`wikiskill -C ws evolve` as a new process in its own process group."""
    with open(f"{output}.out", "wb") as out, open(f"{output}.err", "wb") as err:
        return subprocess.Popen(
            [*wikiskill_command(), *evolve_argv(ws, *extra)], stdout=out, stderr=err, start_new_session=True
        )


class ForkServer:
    """Starts the same command forked from a process that has already imported litellm and
    datasets once, not per start (the test suite uses it). Same code path as the CLI."""

    PRELOAD = ["litellm", "datasets", "wikiskill.cli", "kill_resume"]

    def __init__(self):
        import multiprocessing

        sys.path.insert(0, str(Path(__file__).resolve().parent))  # so the server can import this module
        self.context = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload(self.PRELOAD)

    def __call__(self, ws: Path, output: Path, *extra: str):
        process = self.context.Process(target=_forked_cli, args=(evolve_argv(ws, *extra), str(output)))
        process.start()
        return _ForkedProcess(process)


class _ForkedProcess:
    def __init__(self, process):
        self.process = process
        self.pid = process.pid

    def poll(self) -> int | None:
        return None if self.process.is_alive() else self.process.exitcode

    def wait(self) -> int:
        self.process.join()
        return self.process.exitcode


def _forked_cli(argv: list[str], output: str) -> None:
    os.setsid()
    # Ctrl-C as a command started from a terminal hears it, even when this process was started
    # with SIGINT ignored (as a shell without job control starts a background test run)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for fd, suffix in ((1, ".out"), (2, ".err")):
        os.dup2(os.open(output + suffix, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
    from wikiskill.cli import app

    app(argv, prog_name="wikiskill")


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:  # a forked child killed before its setsid()
        os.kill(pid, signal.SIGKILL)


def run_evolve(
    ws: Path, trigger: str | None = None, start=start_cli, extra: tuple[str, ...] = (), counted: bool = False
) -> Run:
    """Run `wikiskill evolve` once; with a trigger, SIGKILL its process group when it fires. The
    workspace is polled every ms only for a trigger or when the run's event counts are `counted`
    (a reference's); otherwise the counts are what one look at the end sees."""
    output = ws.parent / f".{ws.name}"
    process = start(ws, output, *extra)
    watcher = Watcher(ws)
    began = time.monotonic()
    killed = False
    watching = trigger is not None or counted
    while process.poll() is None:
        if watching:
            watcher.poll()
        elapsed = time.monotonic() - began
        if trigger and watcher.fired(trigger, elapsed):
            _kill_group(process.pid)
            killed = True
            break
        if elapsed > RUN_TIMEOUT:
            _kill_group(process.pid)
            process.wait()
            raise TimeoutError(f"wikiskill evolve ran longer than {RUN_TIMEOUT:.0f} s in {ws}")
        time.sleep(0.001 if watching else 0.05)
    code = process.wait()
    watcher.poll()
    printed = {}
    for suffix in (".out", ".err"):
        path = Path(f"{output}{suffix}")
        printed[suffix] = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        path.unlink(missing_ok=True)
    return Run(None if killed else code, time.monotonic() - began, printed[".out"], printed[".err"], watcher.counts)


def new_workspace(path: Path, base_url: str) -> Path:
    init_workspace(path, benchmark="example-qa", model="openai/fake-model", api_base=base_url, concurrency=CONCURRENCY)
    return path


def agent_requests(server: FakeOpenAIServer, since: int = 0) -> int:
    return sum(1 for body in server.requests[since:] if body["messages"][0]["content"].startswith(AGENT_PROMPT))


@dataclass
class Reference:
    signature: dict
    seconds: float
    counts: Counter
    agent_requests: int


def reference_run(server: FakeOpenAIServer, ws: Path, start=start_cli) -> Reference:
    before = len(server.requests)
    run = run_evolve(new_workspace(ws, server.base_url), start=start, counted=True)
    if run.exit_code != 0:
        raise RuntimeError(f"the reference run failed:\n{run.stderr}")
    problems = consistency_problems(ws)
    if problems:
        raise RuntimeError(f"the reference run is inconsistent: {problems}")
    return Reference(signature(ws), run.seconds, run.counts, agent_requests(server, before))


def draw_trigger(rng: random.Random, reference: Reference) -> str:
    kind = rng.choice(KINDS)
    if kind == "time" or reference.counts[kind] == 0:
        return f"time:{rng.uniform(0.0, reference.seconds):.3f}"
    return f"{kind}:{rng.randint(1, reference.counts[kind])}"


@dataclass
class Outcome:
    triggers: list[str]
    runs: list[str]  # what each run did, e.g. "killed after 1.2 s (ref 4, import 3, marker 2, result 9)"
    problems: list[str]

    @property
    def clean(self) -> bool:
        return not self.problems


def kill_and_resume(
    server: FakeOpenAIServer, ws: Path, reference: Reference, triggers: list[str], start=start_cli
) -> Outcome:
    """Run with each trigger in turn (a kill per run), then re-run until the command exits."""
    before = len(server.requests)
    new_workspace(ws, server.base_url)
    problems: list[str] = []
    runs: list[str] = []
    pending = list(triggers)
    extra: tuple[str, ...] = ()
    while True:
        run = run_evolve(ws, pending.pop(0) if pending else None, start, extra)
        seen = ", ".join(f"{kind} {run.counts[kind]}" for kind in KINDS[1:])
        finished = completed_rounds(ws) == ROUNDS
        ended = (
            f"exit {run.exit_code}"
            if run.exit_code is not None
            else ("killed after its last round's tag" if finished else "killed")
        )
        runs.append(f"{ended} after {run.seconds:.1f} s ({seen})")
        if run.exit_code is None and not finished:
            extra = ("--rounds", str(rounds_left(ws)))
            continue
        if run.exit_code not in (0, None):  # None: killed after its last round was tagged, so done
            problems.append(f"run {len(runs)} exited {run.exit_code}: {run.stderr.strip()[-500:]}")
        break
    twice = sorted(task for task, count in cached_results(ws).items() if count > 1)
    if twice:
        problems.append(f"{len(twice)} finished task(s) computed again, e.g. {twice[0]}")
    spent = agent_requests(server, before)
    if spent > reference.agent_requests + CONCURRENCY * len(triggers):
        problems.append(
            f"{spent} agent requests, reference {reference.agent_requests} (+{CONCURRENCY} in flight per kill at most)"
        )
    problems += consistency_problems(ws)
    problems += _differences(reference.signature, signature(ws))
    return Outcome(triggers, runs, problems)


def _differences(expected: dict, actual: dict) -> list[str]:
    problems = []
    for key in expected:
        if expected[key] != actual[key]:
            problems.append(f"history differs in {key}: expected {_short(expected[key])}, got {_short(actual[key])}")
    return problems


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 600 else text[:600] + "…"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=50, help="kill points to try")
    parser.add_argument("--seed", type=int, default=0, help="seed of the trigger draws")
    parser.add_argument("--latency", type=float, default=0.03, help="seconds the server sleeps per request")
    parser.add_argument("--kills", type=int, default=1, help="kills per point (each on the next re-run)")
    parser.add_argument("--keep", type=Path, default=None, help="keep every workspace under this folder")
    parser.add_argument(
        "--fork-server",
        action="store_true",
        help="fork runs from a process with litellm already imported (no import per start)",
    )
    args = parser.parse_args(argv)
    start = ForkServer() if args.fork_server else start_cli
    rng = random.Random(args.seed)
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="kill-resume-")) if args.keep is None else args.keep.resolve()
    root.mkdir(parents=True, exist_ok=True)
    failures = 0
    with FakeOpenAIServer(ScriptedWorld(), latency=args.latency) as server:
        reference = reference_run(server, root / "reference", start)
        counts = ", ".join(f"{kind} {reference.counts[kind]}" for kind in KINDS[1:])
        print(f"reference: {reference.seconds:.1f} s, events: {counts}", flush=True)
        for point in range(1, args.points + 1):
            triggers = [draw_trigger(rng, reference) for _ in range(args.kills)]
            ws = root / f"point-{point:03d}"
            outcome = kill_and_resume(server, ws, reference, triggers, start)
            verdict = "ok" if outcome.clean else "FAILED"
            print(
                f"point {point:3d}  kill at {' then '.join(triggers):<28} runs {len(outcome.runs)}  {verdict}",
                flush=True,
            )
            for problem in outcome.problems + ([f"runs: {'; '.join(outcome.runs)}"] if outcome.problems else []):
                print(f"    {problem}  [{ws}]", flush=True)
            failures += not outcome.clean
            if outcome.clean and args.keep is None:
                shutil.rmtree(ws, ignore_errors=True)
    if args.keep is None and not failures:
        shutil.rmtree(root, ignore_errors=True)
    wall = time.monotonic() - started
    print(
        f"kill_resume: {args.points - failures}/{args.points} points resumed cleanly "
        f"({args.kills} kill(s) each, seed {args.seed}, wall {wall:.1f} s)",
        flush=True,
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
