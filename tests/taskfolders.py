"""Task-folder suites (`tasks:PATH`) written for tests, and the Python runners that play them."""

import os
import stat
import sys
from pathlib import Path

import yaml

PYTEST = f"env PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider"
"""A check that runs the task's own tests in its workdir (they need no plugin: without the installed
ones, pytest starts in 0.2 s, not 1)."""

BUGGY = "def absolute(x):\n    return x\n"
FIXED = "def absolute(x):\n    return x if x >= 0 else -x\n"


def checks_of(name: str) -> str:
    """One passing and one failing (until fixed) test, the failing one named `name`."""
    return (
        "from calc import absolute\n\n\ndef test_positive_stays():\n    assert absolute(3) == 3\n\n\n"
        f"def {name}():\n    assert absolute(-4) == 4, 'negative input must come back positive'\n"
    )


def write_task(
    suite: Path,
    split: str,
    task_id: str,
    prompt: str = "Fix absolute() in calc.py.",
    files: dict[str, str] | None = None,
    **extra: str,
) -> Path:
    """A task folder: task.md, its files/, and any of answer, rubric.md, expectations (keyword
    names, `rubric` for rubric.md)."""
    folder = suite / split / task_id
    folder.mkdir(parents=True)
    (folder / "task.md").write_text(prompt)
    for name, text in (files or {}).items():
        path = folder / "files" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for name, text in extra.items():
        (folder / ("rubric.md" if name == "rubric" else name)).write_text(text)
    return folder


def bugfix_suite(root: Path, test_names: dict[str, str] | None = None, **settings: object) -> Path:
    """A pytest-checked suite: one buggy calc.py per task; `test_names` gives a task's failing test."""
    suite = root / "suite"
    suite.mkdir(parents=True)
    (suite / "suite.yaml").write_text(yaml.safe_dump({"scorer": "command", "command": PYTEST, **settings}))
    names = test_names or {}
    for split, ids in (("train", ["fix-a", "fix-b"]), ("val", ["fix-c", "fix-d"]), ("test", ["fix-e"])):
        for task_id in ids:
            failing = names.get(task_id, f"test_{task_id.replace('-', '_')}_negative")
            write_task(suite, split, task_id, files={"calc.py": BUGGY, "test_calc.py": checks_of(failing)})
    return suite


def folder_workspace(path: Path, suite: Path | str, api_base: str, agent: str, **sections: dict[str, object]):
    """`wikiskill init` of the task-folder suite at `suite` in `path`, every role on the server at
    `api_base` and the tasks played by `agent`; each of `sections` (`proposer={...}`) is set in its
    wikiskill.yaml."""
    from wikiskill import api

    ws = api.init_workspace(path, benchmark=f"tasks:{suite}", model="openai/fake-model", api_base=api_base, agent=agent)
    if sections:
        config = yaml.safe_load((ws.root / "wikiskill.yaml").read_text())
        config.update(sections)
        (ws.root / "wikiskill.yaml").write_text(yaml.safe_dump(config))
    return ws


RUNNER = '''
from pathlib import Path


def solve(run):
    """Fixes {target} only when a skill carries the marker; says what it found either way."""
    skilled = any({marker!r} in (run.skills_dir / name / "SKILL.md").read_text()
                  for name in (p.name for p in run.skills_dir.iterdir()))
    if skilled and (run.workdir / {target!r}).exists():
        (run.workdir / {target!r}).write_text({fixed!r})
    (run.workdir / "answer.txt").write_text("done" if skilled else "not sure")
    return "fixed {target}" if skilled else "looked at {target}"
'''


def install_runner(tmp_path: Path, monkeypatch, target: str = "calc.py", fixed: str = FIXED) -> str:
    """Writes a Python runner (`python:bugfix_agent:solve`) to sys.path and PYTHONPATH; it writes
    `fixed` over `target` only with a skill that carries scripted.SPELL. Pop `bugfix_agent` from
    sys.modules after."""
    from scripted import SPELL

    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "bugfix_agent.py").write_text(RUNNER.format(marker=SPELL, fixed=fixed, target=target))
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the checks' pytest starts in 0.2 s, not 1
    return "python:bugfix_agent:solve"


UNTOUCHED_ENCODE = "def encode(word):\n    pass\n"
SOLVED_ENCODE = "def encode(word):\n    return word[::-1].upper()\n"
ENCODE_CHECK = """#!/usr/bin/env python3
# HumanEval-style: kept out of the task folder, it imports the agent's solution.py and calls it
import os
import sys

with open(os.path.join(os.environ["WIKISKILL_SUITE_DIR"], "..", "runs.log"), "a") as log:
    log.write(os.path.basename(os.environ["WIKISKILL_TASK_DIR"]) + "\\n")
sys.path.insert(0, os.getcwd())
from solution import encode

for word, expected in [("maple", "ELPAM"), ("tiger", "REGIT")]:
    got = encode(word).strip()
    assert got == expected, f"encode({word!r}) gave {got!r}, expected {expected!r}"
"""


def encode_suite(
    root: Path, splits: dict[str, list[str]], solutions: dict[str, str] | None = None, **settings: object
) -> Path:
    """A suite whose check crashes on what the untouched `encode()` returns (None has no .strip());
    each task carries `solutions[task]` as solution/solution.py (default: the right one; None: no
    solution/ at all). Every run of the check is logged to ROOT/runs.log by task."""
    suite = root / "suite"
    suite.mkdir(parents=True)
    (suite / "suite.yaml").write_text(yaml.safe_dump({"scorer": "command", "command": "./check.py", **settings}))
    check = suite / "check.py"
    check.write_text(ENCODE_CHECK)
    check.chmod(check.stat().st_mode | stat.S_IXUSR)
    chosen = solutions or {}
    for split, ids in splits.items():
        for task_id in ids:
            prompt = "Write encode(word) in solution.py: the word reversed, in upper case."
            folder = write_task(suite, split, task_id, prompt, files={"solution.py": UNTOUCHED_ENCODE})
            solution = chosen.get(task_id, SOLVED_ENCODE)
            if solution is not None:
                (folder / "solution").mkdir()
                (folder / "solution" / "solution.py").write_text(solution)
    return suite
