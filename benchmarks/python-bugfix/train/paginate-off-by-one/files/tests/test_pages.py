import pytest

from pages import paginate


def test_the_first_page_starts_at_the_first_item():
    assert paginate([1, 2, 3, 4, 5], 1, 2) == [1, 2]


def test_the_last_page_holds_what_is_left():
    assert paginate([1, 2, 3, 4, 5], 3, 2) == [5]


def test_page_zero_is_refused():
    with pytest.raises(ValueError):
        paginate([1, 2], 0, 2)
