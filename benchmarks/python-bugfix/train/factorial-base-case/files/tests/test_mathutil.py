import pytest

from mathutil import factorial


def test_factorial_of_zero_is_one():
    assert factorial(0) == 1


def test_factorial_of_five():
    assert factorial(5) == 120


def test_a_negative_number_is_refused():
    with pytest.raises(ValueError):
        factorial(-1)
