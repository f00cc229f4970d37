"""Checks fix-cron-schedule: exits 0 when the task is done."""

from pathlib import Path

jobs = {line.split()[-1]: line.split()[:5] for line in Path("/app/jobs.cron").read_text().splitlines()
        if line.strip() and not line.startswith("#")}
assert jobs.get("/opt/jobs/backup.sh") == ["30", "2", "*", "*", "*"], jobs.get("/opt/jobs/backup.sh")
assert jobs.get("/opt/jobs/poll.sh") == ["*/15", "*", "*", "*", "*"]
assert jobs.get("/opt/jobs/report.sh") == ["0", "6", "*", "*", "1"]
