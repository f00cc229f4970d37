"""Checks count-error-lines: exits 0 when the task is done."""

from pathlib import Path

path = Path("/app/error_count.txt")
assert path.is_file(), "no /app/error_count.txt"
assert path.read_text().strip() == "36", f"wrong count: {path.read_text().strip()!r}"
