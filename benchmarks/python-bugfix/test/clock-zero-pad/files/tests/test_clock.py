from clock import format_elapsed


def test_minutes_and_seconds_have_two_digits_after_an_hour():
    assert format_elapsed(3905) == "1:05:05"


def test_under_an_hour():
    assert format_elapsed(247) == "4:07"
    assert format_elapsed(0) == "0:00"
