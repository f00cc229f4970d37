"""Checks add-shout-flag, one score a part."""

import subprocess

from partial import report


def run(*args):
    done = subprocess.run(["python3", "/app/greet.py", *args], capture_output=True, text=True, timeout=10)
    return done.stdout if done.returncode == 0 else None

report({"shout": run("--shout", "Ada") == "HELLO, ADA!\n",
        "shout_after_name": run("Ada", "--shout") == "HELLO, ADA!\n"}, kept=run("Ada") == "Hello, Ada!\n")
