"""Reading a fresh workspace's wikiskill.yaml and a skill's front matter, as commands do many times
each: PyYAML's pure-Python reader against libyaml's (`core.yaml_reading`), side by side in this
process on the same text.

    python benchmarks/perf/yaml_reading.py [--reads 300]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import yaml

from _common import median_time, table
from wikiskill.api import init_workspace
from wikiskill.core.yaml_reading import LIBYAML
from wikiskill.knowledge.skills import split_front_matter
from wikiskill.store.settings import _ExactConfigLoader, _FastConfigLoader

FRONT_MATTER = (
    "name: spell-letters\n"
    "description: Reverse or spell words letter by letter, one letter per line, before answering.\n"
    "metadata:\n  author: wikiskill\n  version: '3'\n  tags: [words, letters, spelling]\n"
)


def read_time(text: str, loader: type, reads: int) -> float:
    """Milliseconds to read `text` once with `loader`, the median over repeats of `reads` reads."""
    return median_time(lambda: [yaml.load(text, Loader=loader) for _ in range(reads)]) / reads * 1e3  # noqa: S506


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=300)
    reads = parser.parse_args().reads
    if not LIBYAML:
        raise SystemExit("this PyYAML has no libyaml: there is nothing to compare")
    with tempfile.TemporaryDirectory() as folder:
        config = (init_workspace(Path(folder) / "ws").root / "wikiskill.yaml").read_text()
    assert split_front_matter(f"---\n{FRONT_MATTER}---\nbody\n")[0] == yaml.safe_load(FRONT_MATTER)
    documents = [
        ("wikiskill.yaml", config, _ExactConfigLoader, _FastConfigLoader),
        ("front matter", FRONT_MATTER, yaml.SafeLoader, yaml.CSafeLoader),
    ]
    rows = []
    for name, text, exact, fast in documents:
        assert yaml.load(text, Loader=exact) == yaml.load(text, Loader=fast)  # noqa: S506
        pure, lib = (read_time(text, loader, reads) for loader in (exact, fast))
        rows.append([name, f"{len(text.splitlines())} lines", pure, lib, pure / lib])
    print(table(["document", "size", "pure-Python ms", "libyaml ms", "speed-up"], rows))


if __name__ == "__main__":
    main()
