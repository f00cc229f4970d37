"""Checks unique-client-ips: exits 0 when the task is done."""

from pathlib import Path

path = Path("/app/ips.txt")
assert path.is_file(), "no /app/ips.txt"
assert path.read_text().split() == Path("/tests/expected.txt").read_text().split(), path.read_text()
