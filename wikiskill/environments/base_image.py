"""The base image task Dockerfiles build FROM, made without any image registry.

`debootstrap --variant=minbase --include=python3 bookworm ROOT` fetches Debian's packages from a
Debian mirror (no image registry), and `tar -C ROOT -c . | docker import - NAME` turns that root
filesystem into an image. Building needs root (debootstrap mounts and chroots) and takes a few
minutes; an image that already exists under NAME is kept unless a rebuild is asked for.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import WikiskillError
from .runtime import PACKAGE, PROBE
from .settings import ContainerRuntime

DEFAULT_BASE_IMAGE = "wikiskill/base:bookworm"
DEBIAN_SUITE = "bookworm"
PACKAGES = ("python3",)
"""Always installed; `packages` adds more (e.g. python3-pytest for a pytest check)."""
DEBIAN_PACKAGE = re.compile(r"[a-z0-9][a-z0-9+.-]+")
LABEL = "org.wikiskill.base-image"
"""Carried by the image, with the Debian suite as its value."""
PROBE_TIMEOUT = 30.0
START_DOCKERD = "dockerd --storage-driver=overlay2 --iptables=false --bridge=none &"


class BaseImageError(WikiskillError):
    """The base image cannot be made here as asked."""


@dataclass(frozen=True)
class BaseImage:
    name: str
    built: bool
    """False when an image of that name already existed and was kept."""
    seconds: float = 0.0
    log: Path | None = None
    """debootstrap's output, kept beside the temporary folder when the image was built."""


def check_runtime(runtime: ContainerRuntime) -> str:
    """The runtime's client on PATH, once it answers `info`; else a one-line error saying what to do."""
    client = shutil.which(runtime.value)
    if client is None:
        raise BaseImageError(f"{runtime.value} is not installed: apt-get install {PACKAGE[runtime]}")
    try:
        probe = subprocess.run([client, *PROBE[runtime]], capture_output=True, text=True, timeout=PROBE_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise BaseImageError(
            f"{runtime.value} info did not answer in {PROBE_TIMEOUT:.0f} s: is the daemon stuck?"
        ) from None
    if probe.returncode != 0:
        said = _last_line(probe.stderr)
        if runtime is ContainerRuntime.DOCKER:
            raise BaseImageError(
                f"the Docker daemon is not reachable ({said}): start it as root with "
                f"`{START_DOCKERD}` (or `systemctl start docker`)"
            )
        raise BaseImageError(f"podman cannot run containers here ({said})")
    return client


def image_exists(client: str, name: str) -> bool:
    found = subprocess.run([client, "image", "inspect", name], capture_output=True, text=True, timeout=PROBE_TIMEOUT)
    return found.returncode == 0


def make_base_image(
    name: str = DEFAULT_BASE_IMAGE,
    runtime: ContainerRuntime = ContainerRuntime.DOCKER,
    rebuild: bool = False,
    mirror: str | None = None,
    packages: tuple[str, ...] = (),
) -> BaseImage:
    """Make the image `name` with debootstrap and `import`, unless it exists (and `rebuild` is off):
    Debian minbase with python3 and `packages`."""
    wrong = [package for package in packages if not DEBIAN_PACKAGE.fullmatch(package)]
    if wrong:
        raise BaseImageError(f"{wrong[0]!r} is not a Debian package name (lower-case letters, digits, '+', '-', '.')")
    client = check_runtime(runtime)
    if not rebuild and image_exists(client, name):
        return BaseImage(name, built=False)
    debootstrap = shutil.which("debootstrap")
    if debootstrap is None:
        raise BaseImageError("debootstrap is not installed: apt-get install debootstrap")
    if os.geteuid() != 0:
        raise BaseImageError(
            "making the base image needs root (debootstrap mounts and chroots): run "
            "`wikiskill base-image` as root, once"
        )
    started = time.monotonic()
    log = Path(tempfile.gettempdir()) / f"wikiskill-base-image-{os.getpid()}.log"
    with tempfile.TemporaryDirectory(prefix="wikiskill-base-") as root:
        included = ",".join(dict.fromkeys((*PACKAGES, *packages)))
        argv = [
            debootstrap,
            "--variant=minbase",
            f"--include={included}",
            DEBIAN_SUITE,
            root,
            *([mirror] if mirror else []),
        ]
        with log.open("w", encoding="utf-8") as out:
            done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT)
        if done.returncode != 0:
            raise BaseImageError(f"debootstrap failed (exit {done.returncode}); its output is in {log}")
        _import(client, Path(root), name)
    return BaseImage(name, built=True, seconds=time.monotonic() - started, log=log)


def _import(client: str, root: Path, name: str) -> None:
    """`tar -C root -c . | CLIENT import - name`, labelled."""
    tar = subprocess.Popen(["tar", "-C", str(root), "--numeric-owner", "-c", "."], stdout=subprocess.PIPE)
    assert tar.stdout is not None  # stdout=PIPE always opens one
    imported = subprocess.run(
        [client, "import", "--change", f"LABEL {LABEL}={DEBIAN_SUITE}", "--change", 'CMD ["/bin/bash"]', "-", name],
        stdin=tar.stdout,
        capture_output=True,
        text=True,
    )
    tar.stdout.close()
    if tar.wait() != 0 or imported.returncode != 0:
        raise BaseImageError(f"{Path(client).name} import of {root} as {name} failed: {_last_line(imported.stderr)}")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"
