"""A Harbor task's image: built once per environment digest (the sha256 of every file of its
`environment/` folder, the Dockerfile included, by path and content), tagged
`wikiskill-env:<digest12>`, and reused by every task, round and candidate that shares it. Skills
never go into an image: they reach a task's container when it runs. Each build's log is kept;
a failed build raises InfrastructureError naming it and leaves no intermediate container behind
(`--force-rm`)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import threading
from pathlib import Path

from ..core.errors import InfrastructureError
from .base_image import DEFAULT_BASE_IMAGE
from .runtime import Runtime

IMAGE_REPOSITORY = "wikiskill-env"
IMAGE_LABEL = "wikiskill.image"
BASE_REPOSITORY = DEFAULT_BASE_IMAGE.partition(":")[0] + ":"
"""The base image's name up to its tag (`wikiskill base-image` makes it)."""
IGNORED = frozenset({"__pycache__", ".pytest_cache", ".git", ".DS_Store"})


def environment_digest(context: Path) -> str:
    """The sha256 of the build context's files by relative path and content."""
    hasher = hashlib.sha256()
    for root, folders, files in os.walk(context):
        folders[:] = sorted(name for name in folders if name not in IGNORED)
        for name in sorted(files):
            if name in IGNORED:
                continue
            path = Path(root) / name
            hasher.update(str(path.relative_to(context)).encode() + b"\0")
            hasher.update(path.read_bytes() + b"\0")
    return hasher.hexdigest()


class ImageCache:
    """Builds each environment's image at most once; concurrent tasks that need the same one wait
    for the first build."""

    def __init__(self, runtime: Runtime, log_dir: Path):
        self.runtime = runtime
        self.log_dir = log_dir
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self.built: list[str] = []
        """The tags this cache built (not found ready), in order."""

    async def image(self, context: Path, timeout_s: float) -> str:
        """The tag of `context`'s image, built from its Dockerfile unless it is there already."""
        return await asyncio.to_thread(self._image, context, timeout_s)

    def _image(self, context: Path, timeout_s: float) -> str:
        digest = environment_digest(context)
        tag = f"{IMAGE_REPOSITORY}:{digest[:12]}"
        with self._guard:
            lock = self._locks.setdefault(digest, threading.Lock())
        with lock:  # a thread's lock: every event loop of the command shares this cache
            if self.runtime.call("image", "inspect", "--format", "{{.Id}}", tag).returncode == 0:
                return tag
            self._build(context, tag, timeout_s)
            self.built.append(tag)
        return tag

    def log_path(self, tag: str) -> Path:
        return self.log_dir / f"build-{tag.partition(':')[2]}.log"

    def _build(self, context: Path, tag: str, timeout_s: float) -> None:
        log_path = self.log_path(tag)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        argv = self.runtime.argv(
            "build",
            "--force-rm",
            "--label",
            f"{IMAGE_LABEL}=1",
            "-t",
            tag,
            "-f",
            str(context / "Dockerfile"),
            str(context),
        )
        with log_path.open("w", encoding="utf-8") as log:
            log.write(f"$ {' '.join(argv)}\n")
            log.flush()
            try:
                status = subprocess.run(
                    argv,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    timeout=timeout_s,
                    env={**os.environ, "DOCKER_BUILDKIT": "0"},
                ).returncode
            except subprocess.TimeoutExpired:
                raise InfrastructureError(
                    f"the image of {context} took over {timeout_s:g} s to build "
                    f"(build_timeout_sec); its log: {log_path}"
                ) from None
        if status != 0:
            raise InfrastructureError(
                f"the image of {context} failed to build (exit {status}); its log: {log_path}"
                + self._missing_base(context / "Dockerfile")
            )

    def _missing_base(self, dockerfile: Path) -> str:
        """What to run when the Dockerfile builds FROM wikiskill's base image and it is not there."""
        for line in dockerfile.read_text(encoding="utf-8", errors="replace").splitlines():
            words = line.split()
            if len(words) >= 2 and words[0].upper() == "FROM" and words[1].startswith(BASE_REPOSITORY):
                if self.runtime.call("image", "inspect", "--format", "{{.Id}}", words[1]).returncode != 0:
                    return f"; it builds FROM {words[1]}, which this engine lacks: make it with `wikiskill base-image`"
        return ""
