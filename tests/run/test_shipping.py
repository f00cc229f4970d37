"""A suite folder packed for Ray's workers: its digest names its content (the same files give the
same archive, any change another), what editing tools leave is left out, and a worker unpacks it
once per digest into its cache and reads the benchmark from there, the recipe's key kept."""

import gzip
import hashlib
import io
import os
import tarfile

import pytest

from taskfolders import bugfix_suite
from wikiskill.contracts.running import AgentRecipe
from wikiskill.core.config import Config
from wikiskill.run.executors.shipping import SUITES_DIR, SuiteArchive, pack, suite_folder


def test_the_same_files_pack_to_the_same_digest_and_any_edit_to_another(tmp_path):
    suite = bugfix_suite(tmp_path)
    first = pack("tasks", suite)
    (suite / "__pycache__").mkdir()
    (suite / "__pycache__" / "x.pyc").write_bytes(b"\0")
    os.utime(suite / "suite.yaml", (1, 1))
    assert pack("tasks", suite) == first  # times and tool leftovers do not count
    (suite / "val" / "fix-c" / "task.md").write_text("Fix it, please.")
    assert pack("tasks", suite).digest != first.digest


def test_a_worker_unpacks_an_archive_once_and_reads_the_suite_from_its_own_cache(tmp_path):
    suite = bugfix_suite(tmp_path / "driver")
    config = Config(benchmark=f"tasks:{suite}")
    assert suite_folder(config, None) == ("tasks", suite.resolve())
    archive = pack(*suite_folder(config, None))
    cache = tmp_path / "node-cache"
    folder = archive.unpacked(cache)
    (folder / "marker").write_text("kept")
    assert archive.unpacked(cache) == folder and (folder / "marker").exists()  # not unpacked again
    assert folder == cache / SUITES_DIR / archive.digest and not list((cache / SUITES_DIR).glob(".*"))
    assert (folder / "val" / "fix-c" / "files" / "calc.py").read_text() == (
        suite / "val" / "fix-c" / "files" / "calc.py"
    ).read_text()
    recipe = AgentRecipe(config, ())
    moved = archive.recipe_at(recipe, folder)
    assert moved.key == recipe.key and moved.config.benchmark == f"tasks:{folder}"
    assert suite_folder(Config(benchmark="example-qa"), None) is None


def archive_of(*members: tarfile.TarInfo) -> SuiteArchive:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        archive.addfile(tarfile.TarInfo("ok.txt"), io.BytesIO(b""))
        for member in members:
            archive.addfile(member, io.BytesIO(b"x" * member.size) if member.isfile() else None)
    data = gzip.compress(buffer.getvalue())
    return SuiteArchive("tasks", hashlib.sha256(data).hexdigest(), data)


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, link, 1 if kind == tarfile.REGTYPE else 0
    return info


@pytest.mark.parametrize(
    "hostile",
    [
        member("../escaped.txt"),
        member("deep/../../escaped.txt"),
        member("link", tarfile.SYMTYPE, "../../outside"),
        member("hard", tarfile.LNKTYPE, "../outside"),
        member("device", tarfile.CHRTYPE),
    ],
    ids=["parent", "climbs out", "symlink out", "hard link out", "device"],
)
def test_an_archive_member_that_would_land_outside_the_cache_or_is_a_device_is_refused(tmp_path, hostile):
    """On every Python the product supports: through tarfile's `data` filter where it has one, by
    the member check before 3.11.4 (Debian 12's 3.11.2 has none)."""
    cache = tmp_path / "node" / "cache"
    with pytest.raises(tarfile.TarError):
        archive_of(hostile).unpacked(cache)
    assert not list((cache / SUITES_DIR).glob("[!.]*"))  # no suite folder
    assert [path for path in tmp_path.rglob("*") if not path.is_dir()] == []  # nothing landed anywhere


def test_an_archive_member_with_an_absolute_name_never_lands_at_that_name(tmp_path):
    """tarfile's filter strips the leading slash (the file lands inside the cache); the member
    check of older Pythons refuses the archive. Either way nothing is written where it points."""
    outside = tmp_path / "outside" / "absolute.txt"
    try:
        folder = archive_of(member(str(outside))).unpacked(tmp_path / "cache")
    except tarfile.TarError:
        folder = None
    assert not outside.exists()
    if folder is not None:
        assert (folder / str(outside).lstrip("/")).is_file()


def test_a_member_written_through_a_link_that_points_inside_then_climbs_out_is_refused(tmp_path):
    """`sub/up` points at the suite's own folder (inside), so `sub/up/../escaped.txt` reads as
    `sub/escaped.txt` by its name alone but lands beside the cache through the link."""
    hostile = archive_of(
        member("sub", tarfile.DIRTYPE), member("sub/up", tarfile.SYMTYPE, ".."), member("sub/up/../../escaped.txt")
    )
    with pytest.raises(tarfile.TarError):
        hostile.unpacked(tmp_path / "cache")
    assert [path for path in tmp_path.rglob("*") if not path.is_dir()] == []
