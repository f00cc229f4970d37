"""The commands about task environments: `base-image`."""

from __future__ import annotations

import typer

from .. import api
from .common import console


def base_image_command(
    name: str = typer.Option("wikiskill/base:bookworm", "--name", help="The image's name."),
    runtime: str = typer.Option("docker", "--runtime", help="docker or podman."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Build it again even when an image has the name."),
    mirror: str | None = typer.Option(
        None, "--mirror", help="The Debian mirror debootstrap fetches from (default: debootstrap's)."
    ),
    packages: list[str] | None = typer.Option(
        None,
        "--package",
        help="Another Debian package to install (repeatable), e.g. python3-pytest for a suite whose check runs pytest.",
    ),
) -> None:
    """Make the base image task Dockerfiles build FROM, without any image registry.

    Debian bookworm (minbase) with python3 and any --package, made by debootstrap and `docker
    import` (needs root, debootstrap, a running daemon; a few minutes). Skipped when the image
    exists."""
    made = api.base_image(name, runtime, rebuild, mirror, tuple(packages or ()))
    if made.built:
        console.print(
            f"Built {made.name} in {made.seconds:.0f} s (debootstrap's output: {made.log}).",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    else:
        console.print(
            f"{made.name} exists; kept it (--rebuild to build it again).", markup=False, highlight=False, soft_wrap=True
        )
