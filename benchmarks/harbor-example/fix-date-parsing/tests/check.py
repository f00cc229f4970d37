"""Checks fix-date-parsing: exits 0 when the task is done."""

import sys
from datetime import date

sys.path.insert(0, "/app")
from dates import parse_day, weekday_name

assert parse_day("2024-02-29") == date(2024, 2, 29)
assert parse_day("2026-01-05") == date(2026, 1, 5)
assert weekday_name("2024-02-29") == "Thursday"
