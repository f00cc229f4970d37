"""Checks fix-env-file: exits 0 when the task is done."""

from pathlib import Path

lines = [line.strip() for line in Path("/app/.env").read_text().splitlines() if line.strip()]
settings = dict(line.split("=", 1) for line in lines)
assert len(settings) == len(lines), "a setting appears twice"
assert settings == {"APP_NAME": "ledger", "DEBUG": "false", "DATABASE_URL": "postgres://db.internal/ledger",
                    "LOG_LEVEL": "info"}, settings
