import pytest

from convert import fahrenheit_to_celsius


def test_water_boils_at_100():
    assert fahrenheit_to_celsius(212) == pytest.approx(100)


def test_water_freezes_at_0():
    assert fahrenheit_to_celsius(32) == pytest.approx(0)
