"""Containers a killed wikiskill left behind: every container labelled with this workspace whose
owner pid is no longer running on this machine is removed, then the networks and volumes of
its compose projects (whose names carry the workspace's digest and the owner's pid). Other
workspaces' containers, and the running ones of a live wikiskill, are left alone."""

from __future__ import annotations

import os
from pathlib import Path

from .compose import PROJECT_LABEL, project_pid, remove_project
from .container import PID_LABEL, WORKSPACE_LABEL, remove
from .runtime import Runtime


def sweep_orphans(runtime: Runtime, workspace: Path) -> list[str]:
    """Remove this workspace's containers whose owner is dead; their ids."""
    listed = runtime.call(
        "ps",
        "-a",
        "--filter",
        f"label={WORKSPACE_LABEL}={workspace.resolve()}",
        "--format",
        f'{{{{.ID}}}} {{{{.Label "{PID_LABEL}"}}}}',
    )
    dead = [container_id for container_id, pid in _rows(listed.stdout) if not _running(pid)]
    remove(runtime, dead)
    projects = set()
    for kind in ("network", "volume"):
        found = runtime.call(
            kind, "ls", "--filter", f"label={PROJECT_LABEL}", "--format", f'{{{{.Label "{PROJECT_LABEL}"}}}}'
        )
        projects.update(found.stdout.split())
    for name in sorted(projects):
        pid = project_pid(name, workspace)
        if pid is not None and not _running(pid):
            remove_project(runtime, name)
    return dead


def _rows(text: str) -> list[tuple[str, str]]:
    return [(parts[0], parts[1] if len(parts) > 1 else "") for parts in map(str.split, text.splitlines()) if parts]


def _running(pid: str) -> bool:
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
