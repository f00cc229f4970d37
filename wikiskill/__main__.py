"""`python -m wikiskill`: the same as the `wikiskill` command."""

from wikiskill.cli import app

if __name__ == "__main__":  # spawned worker processes import this module too
    app(prog_name="wikiskill")
