"""A Harbor task's image: built once per environment digest (the sha256 of every file of its
`environment/` folder, the Dockerfile included, by path and content, and whether the suite's own
`skills/` folder in it is built empty), tagged `wikiskill-env:<digest12>`, and reused by every
task, round and candidate that shares it. A workspace's skills never go into an image: they reach
a task's container when it runs. Each build's log is kept; a failed build raises
InfrastructureError naming it and leaves no intermediate container behind (`--force-rm`).

An image task.toml pins (`[environment] docker_image`) is used as it is, pulled when it is not
here; one that is neither here nor pullable is an InfrastructureError, never a rebuild that may
differ from what the suite's authors ran.

Images are built with BuildKit where the engine has it with Dockerfile heredocs (asked once per
command, by building a two-line heredoc image); elsewhere with the classic builder, a Dockerfile's
heredocs rewritten for it in a copy of the context (`heredoc`)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import uuid
from pathlib import Path

from ..core.errors import InfrastructureError
from .base_image import DEFAULT_BASE_IMAGE
from .heredoc import lower, uses_heredocs, write_files
from .runtime import Runtime

IMAGE_REPOSITORY = "wikiskill-env"
IMAGE_LABEL = "wikiskill.image"
BASE_REPOSITORY = DEFAULT_BASE_IMAGE.partition(":")[0] + ":"
"""The base image's name up to its tag (`wikiskill base-image` makes it)."""
IGNORED = frozenset({"__pycache__", ".pytest_cache", ".git", ".DS_Store"})
PROBE = "FROM scratch\nCOPY <<EOF /probe\nok\nEOF\n"
"""A Dockerfile only a builder with heredocs builds (and with nothing to pull)."""
SKILLS_DIR = "skills"
"""A suite's own skills in the build context (SkillsBench's Dockerfiles copy them in)."""


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
    for the first build. The check that an image is here also reads its workdir, which a container
    of it starts in (`workdir`)."""

    def __init__(self, runtime: Runtime, log_dir: Path):
        self.runtime = runtime
        self.log_dir = log_dir
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self.built: list[str] = []
        """The tags this cache built (not found ready), in order."""
        self._workdirs: dict[str, str] = {}
        self._buildkit: bool | None = None

    @property
    def buildkit(self) -> bool:
        """Whether the engine builds with BuildKit, heredocs included."""
        with self._guard:
            if self._buildkit is None:
                self._buildkit = builds_heredocs(self.runtime)
            return self._buildkit

    async def image(self, context: Path, timeout_s: float, remove_skills: bool = False) -> str:
        """The tag of `context`'s image, built from its Dockerfile unless it is there already;
        with `remove_skills`, its `skills/` folder is built empty."""
        return await asyncio.to_thread(self._image, context, timeout_s, remove_skills)

    async def pinned(self, image: str, timeout_s: float) -> str:
        """`image` as it is, pulled first when it is not here."""
        return await asyncio.to_thread(self._pinned, image, timeout_s)

    async def workdir(self, image: str) -> str:
        """The working directory of `image` (`/` when it sets none), as last read of it here."""
        if image not in self._workdirs and not await asyncio.to_thread(self._present, image):
            raise InfrastructureError(f"the image {image} is not here")
        return self._workdirs[image]

    def _image(self, context: Path, timeout_s: float, remove_skills: bool) -> str:
        digest = environment_digest(context)
        removing = remove_skills and (context / SKILLS_DIR).is_dir()
        if removing:
            digest = hashlib.sha256(f"{digest}\0suite_skills=remove".encode()).hexdigest()
        tag = f"{IMAGE_REPOSITORY}:{digest[:12]}"
        with self._lock(tag):  # a thread's lock: every event loop of the command shares this cache
            if self._present(tag):
                return tag
            lowering = not self.buildkit and uses_heredocs((context / "Dockerfile").read_text(encoding="utf-8"))
            with tempfile.TemporaryDirectory(prefix="wikiskill-context-") as scratch:
                prepared = prepared_context(context, Path(scratch), removing, lowering)
                self._build(prepared, tag, timeout_s, context)
            self.built.append(tag)
        return tag

    def _pinned(self, image: str, timeout_s: float) -> str:
        with self._lock(image):
            if self._present(image):
                return image
            try:
                pulled = self.runtime.call("pull", "-q", image, timeout_s=timeout_s)
            except InfrastructureError as exc:
                raise InfrastructureError(f"the pinned image {image} is not here and {exc}") from None
            if pulled.returncode != 0:
                said = " ".join((pulled.stderr or pulled.stdout).split())[:300]
                raise InfrastructureError(
                    f"the pinned image {image} (task.toml's [environment] docker_image) is not here and "
                    f"cannot be pulled ({said}): load it, or set harbor.force_build: true to build the "
                    "task's environment/Dockerfile instead"
                )
        return image

    def _lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    def _present(self, image: str) -> bool:
        """Whether `image` is here; its workdir is kept when it is."""
        found = self.runtime.call("image", "inspect", "--format", "{{.Config.WorkingDir}}", image)
        if found.returncode == 0:
            self._workdirs[image] = found.stdout.strip() or "/"
        return found.returncode == 0

    def log_path(self, tag: str) -> Path:
        return self.log_dir / f"build-{tag.partition(':')[2]}.log"

    def _build(self, context: Path, tag: str, timeout_s: float, named: Path) -> None:
        log_path = self.log_path(tag)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        argv = self.runtime.argv(
            "build",
            *([] if self.buildkit else ["--force-rm"]),
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
                    env={**os.environ, "DOCKER_BUILDKIT": "1" if self.buildkit else "0"},
                ).returncode
            except subprocess.TimeoutExpired:
                raise InfrastructureError(
                    f"the image of {named} took over {timeout_s:g} s to build (build_timeout_sec); its log: {log_path}"
                ) from None
        if status != 0:
            raise InfrastructureError(
                f"the image of {named} failed to build (exit {status}); its log: {log_path}"
                + self._missing_base(context / "Dockerfile")
            )

    def _missing_base(self, dockerfile: Path) -> str:
        """What to run when the Dockerfile builds FROM wikiskill's base image and it is not there."""
        for line in dockerfile.read_text(encoding="utf-8", errors="replace").splitlines():
            words = line.split()
            if len(words) >= 2 and words[0].upper() == "FROM" and words[1].startswith(BASE_REPOSITORY):
                if not self._present(words[1]):
                    return f"; it builds FROM {words[1]}, which this engine lacks: make it with `wikiskill base-image`"
        return ""


def prepared_context(context: Path, scratch: Path, remove_skills: bool, lower_heredocs: bool) -> Path:
    """The folder to build from: `context` itself, or a copy of it in `scratch` with its
    `skills/` folder left empty and its Dockerfile's heredocs rewritten for the classic builder."""
    if not (remove_skills or lower_heredocs):
        return context
    copy = scratch / "context"
    shutil.copytree(context, copy, symlinks=True, ignore=shutil.ignore_patterns(*IGNORED))
    if remove_skills:
        skills = copy / SKILLS_DIR
        shutil.rmtree(skills)
        skills.mkdir()
        (skills / ".keep").write_text("")
    if lower_heredocs:
        lowered = lower((copy / "Dockerfile").read_text(encoding="utf-8"))
        (copy / "Dockerfile").write_text(lowered.dockerfile, encoding="utf-8")
        write_files(lowered, copy)
    return copy


def builds_heredocs(runtime: Runtime) -> bool:
    """Whether the engine builds `PROBE` with BuildKit on; the probe's image is removed."""
    tag = f"{IMAGE_REPOSITORY}-probe:{uuid.uuid4().hex[:12]}"
    try:
        done = subprocess.run(
            runtime.argv("build", "-q", "-t", tag, "-"),
            input=PROBE,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "DOCKER_BUILDKIT": "1"},
        )
    except subprocess.TimeoutExpired:
        return False
    if done.returncode == 0:
        runtime.call("rmi", "-f", tag)
    return done.returncode == 0
