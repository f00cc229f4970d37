"""A plugin package of one module in a folder of its own, as a person's package would be: built
and installed by pip (no index, no build isolation), or as what such an install leaves for entry
points to be read from (the module and its dist-info), written directly, which costs no pip and
no build backend process. tests/core/test_plugins.py checks that both read the same."""

import subprocess
import sys
import textwrap
from pathlib import Path


def pyproject(name: str, entry_points: dict[str, dict[str, str]]) -> str:
    """The pyproject.toml of the one-module package `name`, registering each group's names, each
    naming an attribute of the module."""
    module = name.replace("-", "_")
    text = (
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        f'[project]\nname = "{name}"\nversion = "1.0"\n\n'
        f'[tool.hatch.build.targets.wheel]\ninclude = ["{module}.py"]\n'
    )
    for group, names in entry_points.items():
        text += f'\n[project.entry-points."{group}"]\n'
        text += "".join(f'{entry} = "{module}:{attribute}"\n' for entry, attribute in names.items())
    return text


def install_plugin(root: Path, name: str, entry_points: dict[str, dict[str, str]], module: str) -> Path:
    """Install the package `name` (its module `name` with `-` as `_`, registering `entry_points`:
    group -> entry name -> attribute of the module) under `root`; the folder to put on sys.path."""
    package, site = root / name, root / "site"
    package.mkdir()
    (package / "pyproject.toml").write_text(pyproject(name, entry_points))
    (package / f"{name.replace('-', '_')}.py").write_text(textwrap.dedent(module))
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-build-isolation",
         "--target", str(site), str(package)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return site


def write_plugin(root: Path, name: str, entry_points: dict[str, dict[str, str]], module: str) -> Path:
    """What `install_plugin` leaves under `root` that wikiskill reads, written directly: the module
    and a dist-info whose METADATA and entry_points.txt are as pip writes them; the folder to put
    on sys.path."""
    site = root / "site"
    module_name = name.replace("-", "_")
    info = site / f"{module_name}-1.0.dist-info"
    info.mkdir(parents=True)
    (site / f"{module_name}.py").write_text(textwrap.dedent(module))
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    groups = (
        f"[{group}]\n" + "".join(f"{entry} = {module_name}:{attribute}\n" for entry, attribute in names.items())
        for group, names in sorted(entry_points.items())
    )
    (info / "entry_points.txt").write_text("\n".join(groups))
    return site
