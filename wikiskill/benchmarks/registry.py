"""Benchmark families: the built-ins and those of plugins, `core.parts.BENCHMARK_FAMILY`.

A benchmark name is `family` or `family:argument` (`jsonl:DIR`, `scienceworld:boil`). Each name
is a family: a class with a `spec` (`BenchmarkSpec`), `check` and `load`. A user's package adds a
suite by declaring, in its pyproject.toml:

    [project.entry-points."wikiskill.benchmarks"]
    my-suite = "my_package.suite:MySuiteFamily"

A family is imported only when it is asked for, so listing the suites never imports a heavy
environment, and one broken plugin breaks only its own name.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import BenchmarkError, did_you_mean
from ..core.parts import BENCHMARK_FAMILY
from ..core.registry import import_object
from .base import Benchmark, BenchmarkFamily, BenchmarkSpec, LoadRequest, Progress

if TYPE_CHECKING:
    from ..core.config import Config


def split_name(name: str) -> tuple[str, str | None]:
    """`family:argument` as (family, argument); a bare family has argument None."""
    family, colon, argument = name.partition(":")
    return family.strip(), (argument.strip() if colon else None)


def family_names() -> list[str]:
    """Every registered family: wikiskill's own first, then plugins, each group by name."""
    return sorted(BENCHMARK_FAMILY.builtins) + sorted(BENCHMARK_FAMILY.plugins())


@cache
def family(name: str) -> BenchmarkFamily:
    """The family registered as `name`, loaded on first use."""
    names = family_names()
    if name not in names:
        raise BenchmarkError(
            f"unknown benchmark {name!r}{did_you_mean(name, names)}; choose one of: {', '.join(known_benchmarks())}"
        )
    path = BENCHMARK_FAMILY.path(name)
    try:
        loaded = import_object(path)
        found = loaded() if isinstance(loaded, type) else loaded
    except Exception as exc:  # noqa: BLE001 - a plugin may fail in any way; say which one
        raise BenchmarkError(
            f"benchmark plugin {name!r} ({path}) cannot be loaded: {type(exc).__name__}: {exc}"
        ) from exc
    spec = getattr(found, "spec", None)
    if not isinstance(found, BenchmarkFamily) or not isinstance(spec, BenchmarkSpec):
        raise BenchmarkError(
            f"benchmark plugin {name!r} ({path}) is not a benchmark family: "
            "it needs a BenchmarkSpec `spec` and `check` and `load` methods"
        )
    if spec.family != name:
        raise BenchmarkError(f"benchmark plugin {name!r} ({path}) declares family {spec.family!r}")
    return found


def missing_requirements(spec: BenchmarkSpec) -> list[str]:
    return [module for module in spec.requires if importlib.util.find_spec(module) is None]


def resolve(name: str, base: Path | None = None, installed: bool = True) -> tuple[BenchmarkFamily, str | None]:
    """The family of `name` and its checked argument; BenchmarkError says what is wrong.

    `installed=False` checks the family and the argument's presence only: neither the suite's
    requirements nor the family's own `check`, which may import them (reading a workspace's
    config must work, and stay cheap, where its suite cannot run).
    """
    family_name, argument = split_name(name)
    found = family(family_name)
    spec = found.spec
    if argument is not None and spec.argument is None:
        raise BenchmarkError(f"benchmark {family_name!r} takes no argument (got {name!r})")
    if argument is None and spec.argument_required:
        raise BenchmarkError(f"benchmark {family_name!r} needs an argument: {family_name}:{spec.argument}")
    if argument == "":
        raise BenchmarkError(f"benchmark {name!r}: nothing after the ':' (write {family_name}:{spec.argument})")
    if not installed:
        return found, argument
    missing = missing_requirements(spec)
    if missing:
        raise BenchmarkError(
            f"benchmark {family_name!r} needs {spec.needs or ', '.join(missing)} (missing: {', '.join(missing)})"
        )
    return found, found.check(argument, base)


def canonical_name(name: str, base: Path | None = None) -> str:
    """`name` as the family writes it (e.g. a jsonl folder made absolute from `base`)."""
    found, argument = resolve(name, base)
    return found.spec.benchmark_name(argument)


def spec_of(name: str) -> BenchmarkSpec:
    """The spec of the suite `name` names: its family's, or what `spec_for(argument)` says where the
    family's suites differ (a family may offer that method, e.g. when only some are offline-playable)."""
    family_name, argument = split_name(name)
    found = family(family_name)
    spec_for = getattr(found, "spec_for", None)
    return found.spec if spec_for is None or argument is None else spec_for(argument)


def is_known(name: str) -> bool:
    try:
        resolve(name)
    except BenchmarkError:
        return False
    return True


def known_benchmarks() -> list[str]:
    """How each family's names are written, for error messages."""
    return [row.usage for row in list_families() if row.spec is not None]


@dataclass(frozen=True)
class FamilyListing:
    """One row of `wikiskill benchmarks`: a family's spec, or why its plugin cannot be loaded."""

    name: str
    spec: BenchmarkSpec | None
    missing: tuple[str, ...] = ()
    """Required modules that are not installed."""
    error: str | None = None

    @property
    def usage(self) -> str:
        spec = self.spec
        if spec is None or spec.argument is None:
            return self.name
        return f"{self.name}:{spec.argument}" if spec.argument_required else f"{self.name}[:{spec.argument}]"

    @property
    def ready(self) -> bool:
        return self.spec is not None and not self.missing


def list_families() -> list[FamilyListing]:
    rows = []
    for name in family_names():
        try:
            spec = family(name).spec
        except BenchmarkError as exc:
            rows.append(FamilyListing(name, None, error=str(exc)))
            continue
        rows.append(FamilyListing(name, spec, tuple(missing_requirements(spec))))
    return rows


def load_benchmark(config: Config, root: Path | None = None, progress: Progress | None = None) -> Benchmark:
    """The benchmark a workspace's config names; relative paths in its argument are taken from `root`."""
    found, argument = resolve(config.benchmark)
    return found.load(argument, LoadRequest(config, root, progress))
