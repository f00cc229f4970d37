import pytest

from stats import median


def test_an_even_count_averages_the_two_middle_values():
    assert median([4, 1, 3, 2]) == 2.5


def test_an_odd_count_takes_the_middle_value():
    assert median([5, 1, 3]) == 3


def test_no_values_is_refused():
    with pytest.raises(ValueError):
        median([])
