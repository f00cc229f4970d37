"""Checks dedupe-contacts, one score a part."""

from pathlib import Path

from partial import report

path = Path("/app/contacts_clean.csv")
lines = path.read_text().strip().splitlines() if path.is_file() else []
expected = ["name,email", "Ann,ann@example.org", "Bob,BOB@example.org", "Cy,cy@example.org", "Di,di@example.org"]
report({"header": lines[:1] == expected[:1], "rows": sorted(lines[1:]) == sorted(expected[1:]),
        "order": lines == expected})
