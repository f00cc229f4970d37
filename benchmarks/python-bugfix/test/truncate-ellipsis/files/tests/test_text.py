import pytest

from text import truncate


def test_a_cut_text_fits_the_limit_dots_included():
    assert truncate("hello world", 8) == "hello..."


@pytest.mark.parametrize("limit", range(0, 15))
def test_never_longer_than_the_limit(limit):
    assert len(truncate("hello world", limit)) <= limit


def test_text_that_fits_is_unchanged():
    assert truncate("hi", 8) == "hi"
