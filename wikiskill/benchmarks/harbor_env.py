"""A Harbor task's env tables: `[environment.env]` reaches every command of the task's container
(the agent's, the solution's, the verifier's), `[solution.env]` the oracle's `solve.sh` and
`[verifier.env]` the verifier's `test.sh`. As in Harbor, a value written `${VAR}` or
`${VAR:-default}` is taken from this machine's environment when the task runs (so a secret
stays out of the suite); a `${VAR}` that is unset there, with no default, is refused naming it."""

from __future__ import annotations

import os
import re
import shlex

from ..core.errors import ConfigError

TEMPLATE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?\}$", re.DOTALL)
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def resolve_env(table: dict[str, str], where: str) -> dict[str, str]:
    """The table's values, templates filled from this machine's environment."""
    resolved = {}
    for name, value in table.items():
        if not NAME.match(name):
            raise ConfigError(f"{where}: {name!r} is not an environment variable's name")
        match = TEMPLATE.match(str(value))
        if match is None:
            resolved[name] = str(value)
            continue
        variable, default = match.groups()
        found = os.environ.get(variable, default)
        if found is None:
            raise ConfigError(f"{where}: {name} = ${{{variable}}}, but {variable} is not set on this machine")
        resolved[name] = found
    return resolved


def exports(env: dict[str, str]) -> str:
    """A shell prefix that exports `env` for the command after it."""
    if not env:
        return ""
    return "export " + " ".join(f"{name}={shlex.quote(value)}" for name, value in env.items()) + "; "
