"""A plugin package of one module, built and installed by pip (no index, no build isolation) into
a folder of its own, as a person's package would be: its entry points are real metadata."""

import subprocess
import sys
import textwrap
from pathlib import Path


def install_plugin(root: Path, name: str, pyproject: str, module: str) -> Path:
    """Install the package `name` (its module `name` with `-` as `_`) under `root`; the folder
    to put on sys.path."""
    package, site = root / name, root / "site"
    package.mkdir()
    (package / "pyproject.toml").write_text(textwrap.dedent(pyproject))
    (package / f"{name.replace('-', '_')}.py").write_text(textwrap.dedent(module))
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-build-isolation",
         "--target", str(site), str(package)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return site
