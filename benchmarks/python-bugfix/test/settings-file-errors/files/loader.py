"""Reading the app's JSON settings file."""

import json


def load_settings(path):
    """The settings in the JSON file at `path`; `{}` when there is no such file."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except Exception:
        return {}
