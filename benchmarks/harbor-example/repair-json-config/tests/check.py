"""Checks repair-json-config: exits 0 when the task is done."""

import json

with open("/app/config.json") as handle:
    config = json.load(handle)
assert config == {"name": "billing", "port": 8080, "debug": False, "hosts": ["a.internal", "b.internal"]}, config
