"""Checks find-largest-file: exits 0 when the task is done."""

from pathlib import Path

path = Path("/app/largest.txt")
assert path.is_file(), "no /app/largest.txt"
assert path.read_text().strip().removeprefix("./") == "notes/deep/c.dat", path.read_text()
