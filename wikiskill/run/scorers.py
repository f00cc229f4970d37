"""The scorers of workdir suites (`protocols.Scorer`), by the name a suite.yaml gives: `command`
(here), `judge` (`roles/judge.py`), or `python:MODULE:FUNCTION`, a function of the user's with
the protocol's signature.

The command scorer runs the suite's check in the task's working directory, in a process group of
its own, so a timeout kills the check and every process it started (a server a test left
running included). Exit status 0 scores 1; otherwise the check's JUnit report gives the share of
tests passed, or its last stdout line `score: X` gives X, else 0. Its feedback is what failed:
the failing tests' names and messages from the report, else the end of the check's output.

A check that could not run says nothing about the agent's work, and raises `InfrastructureError`:
it could not start (its program or interpreter is missing, or `python -m MODULE` found no MODULE:
the message names what to install), it exited 126 or 127 (the shell's "cannot execute" and "not
found"), its own code lacks a module, or it wrote no JUnit report it was set to write. A `python:`
scorer that raises is likewise a crash. A check that ended in a Python traceback of its own code
(an exception other than AssertionError, raised with no frame in the task's working directory)
raises `CheckCrashed`: whether that is the task's failure or the machine's is decided from
evidence about the check (`crash_rule.py`), not from the traceback's shape.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from pathlib import Path

from ..benchmarks import Task
from ..benchmarks.task_folders import ScorerName, SuiteSettings, TaskFolders
from ..contracts.roles import Scorer
from ..core.errors import InfrastructureError
from ..core.registry import import_object
from ..store.traces import Score, Trajectory, cut

SCORE_LINE = re.compile(r"^\s*score:\s*([-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|[-+]?\.\d+)\s*$", re.IGNORECASE)
OUTPUT_TAIL_BYTES = 64_000
"""The end of the check's output that is read back (its last line, or the summary of failures)."""
KILL_GRACE_S = 2.0
"""How long the killed check's process group gets to go before the scorer gives up waiting."""
NOT_RUN = {126: "a program it runs cannot be executed", 127: "a program it runs was not found"}
"""Exit statuses by which a shell says the check itself could not run."""
TRACEBACK = "Traceback (most recent call last):"
FRAME = re.compile(r'^\s+File "([^"]+)", line \d+')
VERDICTS = ("AssertionError",)
"""Exceptions by which a Python check states a task's failure rather than crashing."""
MODULE_MISSING = re.compile(r"^(?P<python>\S*python[\w.]*): No module named (?P<module>[\w.]+)$")
"""What `python -m MODULE` says when the interpreter lacks MODULE: the check never started."""
MODULE_LACKED = "ModuleNotFoundError:"
"""How a check's own code says that its interpreter lacks a module it imports."""


class CheckCrashed(InfrastructureError):
    """The check ended in a traceback of its own code; `feedback` is the end of its output, the
    task's feedback where the crash is ruled the task's failure."""

    def __init__(self, message: str, feedback: str = ""):
        super().__init__(message)
        self.feedback = feedback

    def __reduce__(self) -> tuple[type[CheckCrashed], tuple[str, str]]:
        return type(self), (str(self), self.feedback)


class ScorerTimeout(Exception):
    """The check ran past the suite's `timeout`; its process group was killed."""


class CommandScorer:
    """Scores a workdir by running the suite's check in it (`scorer: command`)."""

    def __init__(self, command: list[str], settings: SuiteSettings, suite_dir: Path):
        self.command = command
        self.settings = settings
        self.suite_dir = suite_dir

    def score(self, task: Task, trajectory: Trajectory, workdir: Path) -> Score:
        settings = self.settings
        task_dir = task.files.parent if task.files is not None else self.suite_dir / task.split / task.id
        environment = {
            **os.environ,
            "PATH": _with_own_python(os.environ.get("PATH", "")),
            "WIKISKILL_TASK_DIR": str(task_dir),
            "WIKISKILL_SUITE_DIR": str(self.suite_dir),
        }
        with tempfile.TemporaryFile() as log:  # a file, not a pipe: a child holding it open never blocks the read
            try:
                process = subprocess.Popen(
                    self.command,
                    cwd=workdir,
                    env=environment,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except OSError as exc:  # e.g. a script whose #! interpreter is missing
                raise InfrastructureError(
                    f"the check {self.command[0]} could not start: {exc.strerror or type(exc).__name__}"
                ) from None
            try:
                process.wait(timeout=settings.timeout)
            except subprocess.TimeoutExpired:
                raise ScorerTimeout(
                    f"the check ran past its timeout of {settings.timeout:g} s and was killed"
                ) from None
            finally:
                _kill_group(process)  # on a timeout the check; either way whatever it left running
            log.seek(max(0, log.seek(0, os.SEEK_END) - OUTPUT_TAIL_BYTES))
            output = log.read()
        text = output.decode("utf-8", errors="replace")
        if process.returncode == 0:
            return Score(value=1.0)
        _refuse_crash(process.returncode, text, workdir, settings.feedback_chars)
        if settings.junit is not None:
            return junit_score(workdir / settings.junit, settings.feedback_chars)
        lines = text.rstrip().splitlines()
        match = SCORE_LINE.match(lines[-1]) if lines else None
        value = min(1.0, max(0.0, float(match.group(1)))) if match else 0.0
        return Score(value=value, feedback=_tail(text, process.returncode, settings.feedback_chars))


def _refuse_crash(status: int, output: str, workdir: Path, budget: int) -> None:
    """Raise InfrastructureError when the check's end says that it could not run, CheckCrashed
    when it crashed in its own code."""
    lines = output.rstrip().splitlines()
    last = lines[-1].strip() if lines else "no output"
    if status in NOT_RUN:
        raise InfrastructureError(f"the check exited with status {status} ({NOT_RUN[status]}): {last}")
    missing = MODULE_MISSING.match(last)
    if missing is not None:
        python, module = missing["python"], missing["module"]
        raise InfrastructureError(
            f"the check could not start: {python} has no module {module} "
            f"(install it there: {python} -m pip install {module.partition('.')[0]})"
        )
    exception = _own_exception(output, workdir)
    if exception is None:
        return
    if exception.startswith(MODULE_LACKED):
        raise InfrastructureError(f"the check lacks a module: {exception}")
    raise CheckCrashed(f"the check crashed: {exception}", _tail(output, status, budget))


def _own_exception(output: str, workdir: Path) -> str | None:
    """The exception line of the output's last Python traceback, if it is a crash of the
    check's own code: not a verdict (`VERDICTS`), and no frame in the task's working directory
    (the agent's code failing under the check is the task's failure)."""
    start = output.rfind(TRACEBACK)
    if start < 0:
        return None
    lines = output[start + len(TRACEBACK) :].splitlines()
    frames = [match.group(1) for line in lines if (match := FRAME.match(line))]
    exception = next((line.strip() for line in lines if line.strip() and not line[0].isspace()), "")
    if not frames or not exception or exception.startswith(VERDICTS):
        return None
    work = os.path.realpath(workdir)
    for frame in frames:
        if frame.startswith("<"):
            continue
        path = os.path.realpath(os.path.join(work, frame))  # a relative frame is the check's cwd's, the workdir
        if path == work or path.startswith(work + os.sep):
            return None
    return exception


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return
    try:
        process.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        pass


def _tail(output: str, status: int, budget: int) -> str:
    """The end of the check's output (where pytest's summary of failures is), cut to `budget`."""
    head = f"the check exited with status {status}; the end of its output:\n"
    keep = max(budget - len(head), 0)
    return head + (output[-keep:] if keep else "")


def junit_score(report: Path, budget: int) -> Score:
    """The share of the report's test cases that passed, with the failing ones as feedback."""
    try:
        root = ElementTree.parse(report).getroot()
    except (OSError, ElementTree.ParseError) as exc:
        reason = "is missing" if isinstance(exc, OSError) else f"is not valid XML ({' '.join(str(exc).split())})"
        raise InfrastructureError(f"the check wrote no result: its JUnit report {report.name} {reason}") from None
    cases = list(root.iter("testcase"))
    failures = []
    for case in cases:
        problem = next((child for child in case if child.tag in ("failure", "error")), None)
        if problem is not None:
            name = ".".join(part for part in (case.get("classname"), case.get("name")) if part)
            message = " ".join((problem.get("message") or problem.text or problem.tag).split())
            failures.append(f"FAILED {name}: {message[:300]}")
    skipped = sum(1 for case in cases if any(child.tag == "skipped" for child in case))
    counted = len(cases) - skipped
    value = (counted - len(failures)) / counted if counted else 0.0
    feedback = "\n".join(failures) if failures else ("the report holds no test cases" if not counted else "")
    return Score(value=max(0.0, value), feedback=cut(feedback, budget))


class PythonScorer:
    """`python:MODULE:FUNCTION`: the user's `score(task, trajectory, workdir) -> Score` (a float
    is taken as the value)."""

    def __init__(self, function: Callable[..., object], settings: SuiteSettings):
        self.function = function
        self.settings = settings

    def score(self, task: Task, trajectory: Trajectory, workdir: Path) -> Score:
        try:
            result = self.function(task, trajectory, workdir)
        except Exception as exc:  # noqa: BLE001 - the user's scorer may fail in any way
            text = " ".join(str(exc).split())
            raise InfrastructureError(
                f"the scorer {self.settings.scorer} raised {type(exc).__name__}{': ' + text if text else ''}"
            ) from exc
        if isinstance(result, (int, float)):
            result = Score(value=float(result))
        if not isinstance(result, Score):
            result = Score.model_validate(result if isinstance(result, dict) else vars(result))
        return result.model_copy(update={"feedback": cut(result.feedback, self.settings.feedback_chars)})


JudgeMaker = Callable[[], Scorer]


def _with_own_python(path: str) -> str:
    """PATH with the folder of the Python running wikiskill first, so a check's `python3` or
    `pytest` is the environment wikiskill (and pytest, its dependency) is installed in, even when
    wikiskill was started by its full path from a virtual environment that is not activated."""
    return os.pathsep.join([str(Path(sys.executable).parent), *filter(None, path.split(os.pathsep))])


def build_scorer(suite: TaskFolders, judge: JudgeMaker) -> Scorer:
    """The scorer the suite's suite.yaml names; `judge` builds the LLM judge (it needs the team's model)."""
    settings = suite.scoring
    if settings.scorer == ScorerName.COMMAND:
        assert suite.command is not None, "a command suite is opened with its checked command"
        return CommandScorer(suite.command, settings, suite.directory)
    if settings.scorer == ScorerName.JUDGE:
        return judge()
    function = import_object(settings.scorer.removeprefix("python:"))
    if not callable(function):
        raise TypeError(f"{settings.scorer} is not callable")
    return PythonScorer(function, settings)
