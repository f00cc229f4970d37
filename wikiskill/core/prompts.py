"""Jinja2 templates from `prompts/` (and the workspace template), rendered with StrictUndefined."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import jinja2

from .resources import data_dir


@cache
def _environment(folder: str) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir(folder))),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        auto_reload=False,  # shipped templates never change while we run; a stat per render did
    )


def render(name: str, folder: str = "prompts", **variables: object) -> str:
    """Render `prompts/<name>.j2` (or another shipped folder's template)."""
    return render_fields(name, variables, folder)


def render_fields(name: str, variables: Mapping[str, object], folder: str = "prompts") -> str:
    """`render` with the variables as one mapping (the fields of a prompt's context)."""
    return _environment(folder).get_template(f"{name}.j2").render(**variables)
