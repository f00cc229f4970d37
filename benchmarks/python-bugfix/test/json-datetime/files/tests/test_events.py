import json
from datetime import date, datetime

import pytest

from events import to_json


def test_datetimes_and_dates_are_iso_text():
    text = to_json({"at": datetime(2024, 5, 1, 12, 30), "on": date(2024, 5, 2), "n": 1})
    assert json.loads(text) == {"at": "2024-05-01T12:30:00", "on": "2024-05-02", "n": 1}


def test_other_objects_are_still_refused():
    with pytest.raises(TypeError):
        to_json({"x": object()})
