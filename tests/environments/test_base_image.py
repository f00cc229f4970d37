"""`wikiskill base-image` makes the image task Dockerfiles build FROM without any registry: it keeps
an image that exists, and says in one line what to install or start when it cannot build one."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import needs, needs_docker
from wikiskill import api
from wikiskill.cli import app


def base_image(*args: str):
    return CliRunner().invoke(app, ["base-image", *args])


@pytest.fixture(autouse=True)
def own_temporary_folder(tmp_path, monkeypatch):
    """debootstrap's log and root go under the test's folder, not the machine's /tmp."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))


def path_with_only(tmp_path, *programs: str) -> str:
    """A PATH holding only `programs` (from the real PATH), so a program it lacks is missing."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for program in programs:
        (folder / program).symlink_to(shutil.which(program))
    return str(folder)


def empty_image(name: str) -> str:
    """An image with no files under `name`; its id."""
    empty = subprocess.run(["tar", "-c", "-T", "/dev/null"], capture_output=True, check=True).stdout
    return (
        subprocess.run(["docker", "import", "-", name], input=empty, capture_output=True, check=True, text=False)
        .stdout.decode()
        .strip()
    )


def docker_out(*args: str) -> str:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=True).stdout.strip()


@needs_docker
def test_an_image_that_exists_is_kept_without_debootstrap_or_root(tmp_path, monkeypatch):
    name = f"wikiskill-test/base:{uuid.uuid4().hex[:12]}"
    empty_image(name)
    try:
        before = subprocess.run(
            ["docker", "image", "inspect", "-f", "{{.Id}}", name], capture_output=True, text=True
        ).stdout
        monkeypatch.setenv("PATH", path_with_only(tmp_path, "docker"))
        made = api.base_image(name)
        result = base_image("--name", name)
        after = subprocess.run(
            ["docker", "image", "inspect", "-f", "{{.Id}}", name], capture_output=True, text=True
        ).stdout
    finally:
        subprocess.run(["docker", "rmi", name], capture_output=True)
    assert not made.built
    assert result.exit_code == 0 and "exists; kept it" in result.output
    assert before == after


@needs_docker
def test_building_without_debootstrap_says_to_install_it_and_makes_nothing(tmp_path, monkeypatch):
    name = f"wikiskill-test/base:{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("PATH", path_with_only(tmp_path, "docker"))
    result = base_image("--name", name)
    assert result.exit_code == 1
    assert result.output.strip() == "error: debootstrap is not installed: apt-get install debootstrap"
    assert subprocess.run(["docker", "image", "inspect", name], capture_output=True).returncode != 0


def test_without_docker_it_says_to_install_docker_io(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", path_with_only(tmp_path))
    result = base_image()
    assert result.exit_code == 1
    assert result.output.strip() == "error: docker is not installed: apt-get install docker.io"


def test_without_podman_it_names_the_podman_package(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", path_with_only(tmp_path))
    assert base_image("--runtime", "podman").output.strip() == "error: podman is not installed: apt-get install podman"


def test_an_unknown_runtime_is_refused_in_one_line():
    result = base_image("--runtime", "lxc")
    assert result.exit_code == 1
    assert result.output.strip() == "error: unknown container runtime 'lxc': use docker or podman"


@needs("docker", package="docker.io")
def test_a_daemon_that_is_not_running_is_named_with_how_to_start_it(tmp_path, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    result = base_image()
    assert result.exit_code == 1
    line = result.output.strip()
    assert "\n" not in line and line.startswith("error: the Docker daemon is not reachable")
    assert "dockerd --storage-driver=overlay2 --iptables=false --bridge=none" in line


def test_a_package_that_is_not_a_debian_name_is_refused_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", path_with_only(tmp_path))
    result = base_image("--package", "python3-pytest", "--package", "pytest; rm -rf /")
    assert result.exit_code == 1
    assert result.output.strip() == (
        "error: 'pytest; rm -rf /' is not a Debian package name (lower-case letters, digits, '+', '-', '.')"
    )


@needs_docker
@pytest.mark.skipif(os.geteuid() != 0, reason="building the base image needs root")
def test_a_rebuild_imports_what_debootstrap_made_with_the_packages_asked_for(tmp_path, monkeypatch):
    """debootstrap stands in as a script that records its arguments in the root it makes."""
    bin_dir = path_with_only(tmp_path, "docker", "tar")
    (tmp_path / "bin" / "debootstrap").write_text('#!/bin/sh\nfor last; do :; done\necho "$@" > "$last/args.txt"\n')
    (tmp_path / "bin" / "debootstrap").chmod(0o755)
    monkeypatch.setenv("PATH", bin_dir)
    name = f"wikiskill-test/base:{uuid.uuid4().hex[:12]}"
    old = empty_image(name)
    try:
        made = api.base_image(name, rebuild=True, packages=("python3-pytest",))
        container = docker_out("create", name)
        try:
            args = subprocess.run(
                ["docker", "cp", f"{container}:/args.txt", "-"], capture_output=True, check=True
            ).stdout
        finally:
            subprocess.run(["docker", "rm", container], capture_output=True)
        label = docker_out("image", "inspect", "-f", '{{index .Config.Labels "org.wikiskill.base-image"}}', name)
        new = docker_out("image", "inspect", "-f", "{{.Id}}", name)
    finally:
        subprocess.run(["docker", "rmi", name, old], capture_output=True)
    assert new != old
    assert made.built
    assert b"--variant=minbase --include=python3,python3-pytest bookworm " in args
    assert label == "bookworm"


@needs_docker
@pytest.mark.skipif(os.geteuid() != 0, reason="building the base image needs root")
def test_a_failed_debootstrap_names_its_log_and_makes_no_image(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", path_with_only(tmp_path, "docker", "tar"))
    (tmp_path / "bin" / "debootstrap").write_text("#!/bin/sh\necho 'E: Failed getting release file' >&2\nexit 1\n")
    (tmp_path / "bin" / "debootstrap").chmod(0o755)
    name = f"wikiskill-test/base:{uuid.uuid4().hex[:12]}"
    result = base_image("--name", name)
    assert result.exit_code == 1
    line = result.output.strip()
    assert line.startswith("error: debootstrap failed (exit 1); its output is in ")
    assert "E: Failed getting release file" in Path(line.rsplit(" ", 1)[1]).read_text()
    assert subprocess.run(["docker", "image", "inspect", name], capture_output=True).returncode != 0
