"""Checks sales-by-region: exits 0 when the task is done."""

from pathlib import Path

path = Path("/app/totals.csv")
assert path.is_file(), "no /app/totals.csv"
assert path.read_text().split() == Path("/tests/expected.csv").read_text().split(), path.read_text()
