import pytest

from duration import parse_duration


def test_hours_and_minutes_add_up():
    assert parse_duration("1h30m") == 5400


def test_minutes_and_seconds_add_up():
    assert parse_duration("2m15s") == 135


def test_one_unit_alone():
    assert parse_duration("45s") == 45


@pytest.mark.parametrize("text", ["", "abc", "10", "1h30x"])
def test_text_that_is_no_duration_is_refused(text):
    with pytest.raises(ValueError):
        parse_duration(text)
