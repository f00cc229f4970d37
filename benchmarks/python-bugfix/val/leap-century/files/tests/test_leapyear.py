import pytest

from leapyear import is_leap


@pytest.mark.parametrize(("year", "leap"), [(1900, False), (2100, False), (2000, True), (2024, True), (2023, False)])
def test_the_gregorian_rule(year, leap):
    assert is_leap(year) is leap
