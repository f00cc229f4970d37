"""Checks users-json-to-csv: exits 0 when the task is done."""

import csv
import json
from pathlib import Path

path = Path("/app/users.csv")
assert path.is_file(), "no /app/users.csv"
users = sorted(json.loads(Path("/app/users.json").read_text()), key=lambda user: user["id"])
with path.open(newline="") as handle:
    rows = list(csv.reader(handle))
assert rows[0] == ["id", "name", "email"], rows[0]
assert rows[1:] == [[str(user["id"]), user["name"], user["email"]] for user in users], rows
