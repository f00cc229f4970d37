"""Checks harden-sshd-config, one score a part."""

from pathlib import Path

from partial import report

settings = {}
for line in Path("/app/sshd_config").read_text().splitlines():
    if line.strip() and not line.lstrip().startswith("#"):
        key, _, value = line.strip().partition(" ")
        settings.setdefault(key, []).append(value.strip())
report({"root_login": settings.get("PermitRootLogin") == ["no"],
        "passwords": settings.get("PasswordAuthentication") == ["no"],
        "x11": settings.get("X11Forwarding") == ["no"]},
       kept=settings.get("Port") == ["22"] and settings.get("UsePAM") == ["yes"])
