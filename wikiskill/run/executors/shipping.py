"""A suite's folder sent to the workers by content, never by the command's path: the command packs
the folder the config's benchmark names (`harbor:PATH`, `tasks:PATH`, `jsonl:PATH`) into one
archive named by its digest, and each worker unpacks it once per digest into its own cache and
loads the benchmark from there. A node that cannot read the command's disk runs the suite the same.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from ...benchmarks.registry import split_name
from ...contracts.running import AgentRecipe
from ...core.config import Config

LEFT_OUT = frozenset({"__pycache__", ".pytest_cache", ".git", ".DS_Store"})
"""Names a packed suite leaves out (what running or editing tools leave behind)."""
SUITES_DIR = "wikiskill-suites"


@dataclass(frozen=True)
class SuiteArchive:
    """A suite folder packed: the benchmark family that reads it, and the archive's digest."""

    family: str
    digest: str
    data: bytes

    def unpacked(self, cache: Path) -> Path:
        """The suite's folder under `cache`, unpacked on first use (atomically: a worker killed
        half-way leaves only a scratch folder, and two workers of one node unpack it once)."""
        folder = cache / SUITES_DIR / self.digest
        if folder.is_dir():
            return folder
        folder.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{self.digest[:12]}-", dir=folder.parent))
        try:
            with tarfile.open(fileobj=io.BytesIO(self.data), mode="r:gz") as archive:
                _extract(archive, scratch)
        except BaseException:  # a refused member: nothing of the archive stays behind
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        try:
            os.rename(scratch, folder)
        except OSError:  # another worker of this node unpacked it first
            shutil.rmtree(scratch, ignore_errors=True)
        return folder

    def recipe_at(self, recipe: AgentRecipe, folder: Path) -> AgentRecipe:
        """`recipe` with its benchmark read from `folder`, its key kept (assignments name it)."""
        config = recipe.config.model_copy(update={"benchmark": f"{self.family}:{folder}"})
        return replace(recipe, config=config)


def _extract(archive: tarfile.TarFile, folder: Path) -> None:
    """Unpack `archive` into `folder` through tarfile's `data` filter (nothing outside the folder,
    no devices). A Python before 3.11.4 (Debian 12 ships 3.11.2) has no filters: there each member
    is extracted only if it is a file, a folder or a link whose place and target, resolved through
    the links extracted before it, stay inside, as `pack` makes them."""
    if hasattr(tarfile, "data_filter"):
        archive.extractall(folder, filter="data")
        return
    root = os.path.realpath(folder)
    for member in archive.getmembers():
        place = os.path.realpath(os.path.join(root, member.name))
        target = place
        if member.issym():
            target = os.path.realpath(os.path.join(os.path.dirname(place), member.linkname))
        elif member.islnk():
            target = os.path.realpath(os.path.join(root, member.linkname))
        kind = member.isfile() or member.isdir() or member.issym() or member.islnk()
        if not (kind and _inside(place, root) and _inside(target, root)):
            raise tarfile.TarError(f"{member.name}: not a file, folder or link inside the suite's folder")
        archive.extract(member, root)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root + os.sep)


def suite_folder(config: Config, root: Path | None) -> tuple[str, Path] | None:
    """The family and the local folder the config's benchmark reads, if it names one."""
    family, argument = split_name(config.benchmark)
    if not argument:
        return None
    path = Path(argument).expanduser()
    if not path.is_absolute() and root is not None:
        path = root / path
    return (family, path.resolve()) if path.is_dir() else None


def pack(family: str, folder: Path) -> SuiteArchive:
    """`folder` as a gzipped tar that is the same bytes for the same files (names sorted, owners
    and times zeroed), so its digest names the content."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder)
            if LEFT_OUT.intersection(relative.parts):
                continue
            info = archive.gettarinfo(str(path), arcname=relative.as_posix())
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            if info.isfile():
                with path.open("rb") as handle:
                    archive.addfile(info, handle)
            else:
                archive.addfile(info)
    data = gzip.compress(buffer.getvalue(), mtime=0)
    return SuiteArchive(family, hashlib.sha256(data).hexdigest(), data)
