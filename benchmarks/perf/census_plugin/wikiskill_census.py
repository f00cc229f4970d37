"""The census's pytest plugin (`-p wikiskill_census`, benchmarks/perf/suite_census.py): writes one
line per test, to a file per pytest process: its node id, its kind (from its marks and module),
when it began and ended, and the CPU of the worker and of the processes it waited for meanwhile."""

from __future__ import annotations

import os
import re
import resource
import time
from pathlib import Path

import pytest

TESTS_FILE = "WIKISKILL_CENSUS_TESTS"
KILL_MODULES = re.compile(r"tests/e2e/test_(kill_\w+|resume|interrupts)\.py$")


def kind_of(item: pytest.Item) -> str:
    module = item.nodeid.split("::")[0]
    if "ray" in Path(module).stem.split("_"):
        return "Ray"
    if item.get_closest_marker("needs_docker") is not None:
        return "containers"
    if any(str(mark.kwargs.get("package", "")).startswith("@") for mark in item.iter_markers("needs")):
        return "coding-agent CLIs"  # a program from an npm package
    if KILL_MODULES.search(module):
        return "kill -9 and resume"
    return "the rest"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):  # type: ignore[no-untyped-def]
    path = os.environ.get(TESTS_FILE)
    if not path:
        yield
        return
    cpu, began = _cpu(), time.time()
    yield
    ended = time.time()
    with open(f"{path}.{os.getpid()}", "a", encoding="utf-8") as out:
        out.write(f"{item.nodeid}\t{kind_of(item)}\t{began:.3f}\t{ended:.3f}\t{_cpu() - cpu:.3f}\n")


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
