"""Checks fix-word-count: exits 0 when the task is done."""

import subprocess
from pathlib import Path


def words(text):
    path = Path("/tmp/wordcount-check.txt")
    path.write_text(text)
    done = subprocess.run(["python3", "/app/wordcount.py", str(path)], capture_output=True, text=True, timeout=10)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip())

assert words("one two three\n\nfour  five\n   \nsix seven eight nine\n") == 9
assert words("") == 0
assert words("a\tb\n\n\nc\n") == 3
