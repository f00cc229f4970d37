"""The base of every section of wikiskill.yaml: an unknown key is refused, and each field's
attribute docstring is its documentation (docs/reference/config.md)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
