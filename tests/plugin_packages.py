"""A plugin package of one module, built and installed by pip (no index, no build isolation) into
a folder of its own, as a person's package would be: its entry points are real metadata."""

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
