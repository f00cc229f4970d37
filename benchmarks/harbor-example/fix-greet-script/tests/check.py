"""Checks fix-greet-script: exits 0 when the task is done."""

import os
import subprocess

script = "/app/bin/greet"
assert os.access(script, os.X_OK), "not executable"
named = subprocess.run([script, "Alice"], capture_output=True, text=True, timeout=10)
assert named.returncode == 0 and named.stdout == "hello, Alice\n", named
plain = subprocess.run([script], capture_output=True, text=True, timeout=10)
assert plain.returncode == 0 and plain.stdout == "hello, world\n", plain
