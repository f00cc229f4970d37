"""Reading YAML through libyaml where PyYAML was built with it, else through its pure-Python reader.

Both read a valid document into the same values; libyaml is several times faster
(`benchmarks/perf/yaml_reading.py`), which counts because every command reads wikiskill.yaml and
every skill's front matter many times. They word a mistake differently, so a document libyaml
refuses is read again by the pure-Python reader, whose error is raised: a broken file gets the
same message on every machine.
"""

from __future__ import annotations

import yaml

LIBYAML: bool = yaml.__with_libyaml__
"""Whether this PyYAML has libyaml; a loader class built on `yaml.CSafeLoader` exists only then."""


class Reader:
    """Reads YAML text into Python values: with `fast` (libyaml's loader; `exact` itself where
    PyYAML has no libyaml), and again with `exact`, the same loader on the pure-Python reader, where
    `fast` refuses it."""

    def __init__(self, fast: type[yaml.SafeLoader | yaml.CSafeLoader], exact: type[yaml.SafeLoader]):
        self.fast, self.exact = fast, exact

    def load(self, text: str) -> object:
        try:
            return yaml.load(text, Loader=self.fast)  # noqa: S506 - safe loaders only
        except (yaml.YAMLError, UnicodeEncodeError):  # libyaml takes UTF-8, which a lone surrogate is not
            if self.fast is self.exact:
                raise
            yaml.load(text, Loader=self.exact)  # noqa: S506 - raises the pure-Python reader's own error
            raise


SAFE = Reader(yaml.CSafeLoader if LIBYAML else yaml.SafeLoader, yaml.SafeLoader)
"""`yaml.safe_load`, read fast."""
