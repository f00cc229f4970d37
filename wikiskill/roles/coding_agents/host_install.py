"""A CLI's install on this machine, as a task's container sees it: nothing is installed into the
image (a container has no internet to install from); the `node` binary and the global npm
package folder that holds the CLI (`npm root -g`: the outermost `node_modules` above the CLI's
real file) are bind-mounted read-only at the same paths, and the CLI runs as `node <its file>`.

The host's `node` is linked against glibc: it starts in a glibc image (Debian, Ubuntu, the
`wikiskill/base:bookworm` base), not in a musl one such as Alpine; `probe` says so in one line.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ...contracts.coding_agent import CliPreset
from ...core.errors import ConfigError
from ...environments.mounts import Mount
from .presets import program_path

IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""The PATH of a Debian image, behind the folder of the mounted `node`."""


@dataclass(frozen=True)
class HostInstall:
    node: str
    """The real path of this machine's `node`."""
    packages: str
    """The global npm package folder holding the CLI."""
    command: tuple[str, ...]
    """How the CLI starts inside the container: `node <its real file>`, or the file itself when
    it is a native program."""

    def mounts(self) -> tuple[Mount, ...]:
        return Mount(self.node), Mount(self.packages)

    def path_variable(self) -> str:
        return f"{os.path.dirname(self.node)}:{IMAGE_PATH}"


def host_install(preset: CliPreset) -> HostInstall:
    """Where the preset's CLI and its `node` are on this machine; a ConfigError in one line when
    it is not an npm package or node is missing."""
    program = os.path.realpath(program_path(preset))
    modules = [parent for parent in Path(program).parents if parent.name == "node_modules"]
    if not modules:
        raise ConfigError(
            f"agent.runner: {preset.name}'s `{preset.program}` ({program}) is not in a global npm "
            "package folder, which is what is mounted into a Harbor task's container"
        )
    node = shutil.which("node")
    if node is None:
        raise ConfigError(f"agent.runner: {preset.name} runs on node, which is not on PATH")
    node = os.path.realpath(node)
    with open(program, "rb") as file:
        script = file.read(2) == b"#!"
    return HostInstall(node, str(modules[-1]), (node, program) if script else (program,))
