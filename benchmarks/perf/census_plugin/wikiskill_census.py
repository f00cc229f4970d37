"""The census's pytest plugin (`-p wikiskill_census`, benchmarks/perf/suite_census.py): writes
each collected test's kind, from its marks and module, and each test's wall and CPU seconds, to
files per pytest process."""

from __future__ import annotations

import os
import re
import resource
import time
from pathlib import Path

import pytest

KINDS_FILE = "WIKISKILL_CENSUS_KINDS"
KILL_MODULES = re.compile(r"tests/e2e/test_(kill_\w+|resume|interrupts)\.py$")


def kind_of(module: str, marks: set[str], npm: bool) -> str:
    if "ray" in Path(module).stem.split("_"):
        return "Ray"
    if "needs_docker" in marks:
        return "containers"
    if npm:
        return "coding-agent CLIs"
    if KILL_MODULES.search(module):
        return "kill -9 and resume"
    return "the rest"


def pytest_collection_modifyitems(items: list) -> None:
    path = os.environ.get(KINDS_FILE)
    if not path:
        return
    lines = []
    for item in items:
        marks = {mark.name for mark in item.iter_markers()}
        npm = any(str(mark.kwargs.get("package", "")).startswith("@") for mark in item.iter_markers("needs"))
        lines.append(f"{junit_key(item.nodeid)}\t{kind_of(item.nodeid.split('::')[0], marks, npm)}\n")
    Path(f"{path}.{os.getpid()}").write_text("".join(lines), encoding="utf-8")  # one file per xdist worker


def junit_key(nodeid: str) -> str:
    """A test's node id as pytest's junit file names it: `tests.run.test_ray[.Class]::test_x[id]`."""
    module, *rest = nodeid.split("::")
    return ".".join([module.removesuffix(".py").replace("/", "."), *rest[:-1]]) + "::" + rest[-1]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):  # type: ignore[no-untyped-def]
    """Times each test in its worker: when it began and ended, and the CPU of the worker and of
    the processes it waited for."""
    path = os.environ.get(KINDS_FILE)
    if not path:
        yield
        return
    cpu, began = _cpu(), time.time()
    yield
    ended = time.time()
    with open(f"{path}.times.{os.getpid()}", "a", encoding="utf-8") as out:
        out.write(f"{junit_key(item.nodeid)}\t{began:.3f}\t{ended:.3f}\t{_cpu() - cpu:.3f}\n")


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
