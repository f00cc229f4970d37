"""The kinds of replaceable part. A `PartKind` holds what a setting needs: the names it accepts
and the entry-point group plugins register under. A setting names a built-in, a plugin (an entry
point in the kind's group, `wikiskill.<kind>`, read from package metadata without importing the
plugin), or gives the dotted path of a class of one's own, `package.module:Class` or
`package.module.Class`, as mini-swe-agent's `get_environment_class` does. Built-ins are
registered as dotted paths (`core/parts.py`), so one with heavy imports (Ray) is imported only
when chosen; the class marks itself with `@KIND.builtin`, which gives it the name it is
registered under.

A `Registry` is a kind with the contract its classes follow: it loads a class and checks it.
Core knows no contract, so each registry is declared beside its contract (`contracts/gate.py`
holds `GATE_POLICIES`), where `load` and `create` can be typed by it."""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from .errors import ConfigError, WikiskillError, did_you_mean

T_co = TypeVar("T_co", covariant=True)
C = TypeVar("C", bound=type)

_IDENTIFIER = r"[A-Za-z_]\w*"
DOTTED_PATH = re.compile(rf"{_IDENTIFIER}(\.{_IDENTIFIER})*(:{_IDENTIFIER}|\.{_IDENTIFIER})")
"""A module and a class in it: `package.module:Class` or `package.module.Class`."""


def _attribute(path: str) -> tuple[str, str, object]:
    """The module, the name and what it holds (None if nothing) for `package.module:name` or
    `package.module.name`."""
    module_name, _, name = path.partition(":") if ":" in path else path.rpartition(".")
    return module_name, name, getattr(importlib.import_module(module_name), name, None)


def import_object(path: str) -> object:
    """What `package.module:name` or `package.module.name` names; ImportError says why not."""
    module_name, name, found = _attribute(path)
    if found is None:
        raise ImportError(f"module {module_name!r} has no {name!r}")
    return found


def import_class(path: str) -> type:
    """The class at `package.module:Class` or `package.module.Class`; ImportError says why not."""
    module_name, name, found = _attribute(path)
    if not isinstance(found, type):
        raise ImportError(f"module {module_name!r} has no class {name!r}")
    return found


def _path_state() -> tuple[tuple[str, int], ...]:
    """Each sys.path entry with its modification time: installing or removing a package adds or
    removes a folder in its entry, which changes that time (importlib.metadata's own caches go stale
    by the same rule)."""
    state = []
    for entry in sys.path:
        try:
            state.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            state.append((entry, -1))
    return tuple(state)


@functools.lru_cache(maxsize=64)
def _registered(group: str, path_state: tuple[tuple[str, int], ...]) -> tuple[tuple[str, str], ...]:
    """The entry points of `group` while sys.path is as `path_state` says. Reading them opens every
    installed distribution's metadata, and settings ask for a kind's names at every turn."""
    return tuple((point.name, point.value) for point in entry_points(group=group))


def protocol_members(protocol: type) -> set[str]:
    """The public names a protocol declares: its methods and its (class) attributes."""
    members: set[str] = set()
    for base in protocol.__mro__:
        if base is object or base.__name__ in ("Protocol", "Generic"):
            continue
        members |= {name for name in [*vars(base), *getattr(base, "__annotations__", {})] if not name.startswith("_")}
    return members


@dataclass(frozen=True, eq=False)
class PartKind:
    """The parts of one kind, by name. `what` names the kind in messages (`gate policy`), `setting`
    is the wikiskill.yaml setting that picks one (`gate.policy`), `group` the entry-point group
    plugins register under, and `builtins` maps each built-in name to its class's dotted path,
    the default first. `named_by`: the class attribute the contract reads the name from (`name`),
    set by `builtin`."""

    what: str
    setting: str
    group: str
    builtins: Mapping[str, str]
    named_by: str | None = None

    @property
    def default(self) -> str:
        return next(iter(self.builtins))

    def plugins(self) -> dict[str, str]:
        """The names installed packages register in `group`, each with its dotted path."""
        return {name: path for name, path in _registered(self.group, _path_state()) if name not in self.builtins}

    def names(self) -> list[str]:
        """Every name the setting accepts besides a dotted path: the built-ins, then the plugins."""
        return [*self.builtins, *sorted(self.plugins())]

    def check(self, value: object) -> str:
        """The canonical name (any case) or the dotted path unchanged; ValueError naming the
        accepted names otherwise, so a typo fails when the config is read."""
        text = str(value).strip()
        for name in self.names():
            if text.lower() == name.lower():
                return name
        if DOTTED_PATH.fullmatch(text):
            return text
        raise ValueError(
            f"{text!r} is no {self.what} ({', '.join(self.names())}) and no dotted path to a class "
            f"(package.module:Class){did_you_mean(text, self.names())}"
        )

    def path(self, name: str) -> str:
        return self.builtins.get(name) or self.plugins().get(name) or name

    def builtin(self, cls: C) -> C:
        """Mark `cls` as the built-in registered at its dotted path; it takes that name."""
        path = f"{cls.__module__}:{cls.__qualname__}"
        names = [name for name, registered in self.builtins.items() if registered == path]
        if len(names) != 1:
            raise TypeError(f"{path} is registered as no built-in {self.what}")
        if self.named_by:
            setattr(cls, self.named_by, names[0])
        return cls


class Registry(Generic[T_co]):
    """The classes of one `kind` that follow `contract`, a Protocol: `load` gives a class typed as
    the contract's, `create` an instance of it, each refusing a class that lacks a member of the
    contract. mypy takes no Protocol where a `type[...]` is asked (it could be called), so the
    contract is asked as what makes one; it is still the class itself, whose members `load` reads.

    `defaults`: a class giving some of the contract's members a default (`contracts.gate.BasePolicy`),
    so a part written before the contract declared them still loads: a class that lacks one of them
    is loaded with `defaults` mixed in below it."""

    def __init__(self, kind: PartKind, contract: Callable[..., T_co], defaults: type | None = None) -> None:
        if not isinstance(contract, type):
            raise TypeError(f"the contract of a {kind.what} is a class, not {contract!r}")
        self.kind = kind
        self.contract: type = contract
        self.defaults = defaults
        self.optional = protocol_members(defaults) if defaults is not None else set()

    def load(self, value: str) -> type[T_co]:
        """The class `value` names; a ConfigError of one line naming `value` when it cannot be
        imported or lacks a member of the contract."""
        name = str(value)
        try:
            found = import_class(self.kind.path(name))
        except (ImportError, ValueError) as exc:
            raise ConfigError(f"{self.kind.setting}: cannot import {name!r}: {exc}") from exc
        required = protocol_members(self.contract) - self.optional
        missing = sorted(member for member in required if not hasattr(found, member))
        if missing:
            raise ConfigError(
                f"{self.kind.setting}: {name!r} is not a {self.contract.__name__}: it has no {', '.join(missing)}"
            )
        if self.defaults is not None and not all(hasattr(found, member) for member in self.optional):
            return type(found.__name__, (found, self.defaults), {"__module__": found.__module__})
        return found

    def create(self, value: str) -> T_co:
        """An instance of the part a command-line option names (a name or a dotted path); a
        WikiskillError of one line listing the names when it names none."""
        try:
            name = self.kind.check(value)
        except ValueError:
            names = self.kind.names()
            listed = f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else names[0]
            hint = did_you_mean(str(value), names)
            raise WikiskillError(f"unknown {self.kind.what} {value!r}{hint}: use {listed}") from None
        return self.load(name)()
