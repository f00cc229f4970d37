"""Name -> class registries for the parts a user may replace (executors, gate policies): a setting
names a built-in (an enum value) or gives the dotted path of a class of one's own,
`package.module:Class` or `package.module.Class`, as mini-swe-agent's `get_environment_class`
does. Built-ins are registered as dotted paths too, so one with heavy imports (Ray) is imported
only when chosen."""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from enum import Enum
from typing import Generic, TypeVar

from .errors import ConfigError

T = TypeVar("T")
E = TypeVar("E", bound=Enum)

_IDENTIFIER = r"[A-Za-z_]\w*"
DOTTED_PATH = re.compile(rf"{_IDENTIFIER}(\.{_IDENTIFIER})*(:{_IDENTIFIER}|\.{_IDENTIFIER})")
"""A module and a class in it: `package.module:Class` or `package.module.Class`."""


def builtin_or_path(value: object, builtins: type[E], what: str) -> E | str:
    """A setting's value as its built-in enum member (any case), or a dotted path unchanged; any
    other value is refused naming the built-ins, so a typo fails when the config is read."""
    if isinstance(value, builtins):
        return value
    text = str(value).strip()
    for member in builtins:
        if text.lower() == str(member.value):
            return member
    if DOTTED_PATH.fullmatch(text):
        return text
    names = ", ".join(str(member.value) for member in builtins)
    raise ValueError(f"{text!r} is no {what} ({names}) and no dotted path to a class (package.module:Class)")


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


def protocol_members(protocol: type) -> set[str]:
    """The public names a protocol declares: its methods and its (class) attributes."""
    members: set[str] = set()
    for base in protocol.__mro__:
        if base is object or base.__name__ in ("Protocol", "Generic"):
            continue
        members |= {name for name in [*vars(base), *getattr(base, "__annotations__", {})]
                    if not name.startswith("_")}
    return members


class Registry(Generic[T]):
    """The classes a setting (`what`, e.g. `gate.policy`) may name: `builtins` maps each value of
    its enum to a dotted path; any other value is a dotted path to a user's class. Whatever is
    loaded must have every member of `protocol`."""

    def __init__(self, what: str, protocol: type[T], builtins: Mapping[E, str]):
        self.what, self.protocol = what, protocol
        self.builtins = {str(getattr(name, "value", name)): path for name, path in builtins.items()}
        for kind in {type(name) for name in builtins}:
            unregistered = [member for member in kind if str(member.value) not in self.builtins]
            if unregistered:
                raise TypeError(f"{what}: no class registered for {unregistered}")

    def load(self, value: str | Enum) -> type[T]:
        """The class `value` names; a ConfigError of one line naming `value` when it cannot be
        imported or lacks a member of the protocol."""
        name = str(getattr(value, "value", value))
        path = self.builtins.get(name, name)
        try:
            found = import_class(path)
        except (ImportError, ValueError) as exc:
            raise ConfigError(f"{self.what}: cannot import {name!r}: {exc}") from exc
        missing = sorted(member for member in protocol_members(self.protocol) if not hasattr(found, member))
        if missing:
            raise ConfigError(f"{self.what}: {name!r} is not a {self.protocol.__name__}: "
                              f"it has no {', '.join(missing)}")
        return found
