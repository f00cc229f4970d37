"""Events as JSON for the audit log."""

import json


def to_json(event):
    """`event` (a dict) as JSON text with sorted keys."""
    return json.dumps(event, sort_keys=True)
