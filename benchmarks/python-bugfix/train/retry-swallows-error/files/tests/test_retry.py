import pytest

from retry import retry


def test_the_last_error_is_raised_when_every_attempt_fails():
    calls = []

    def fail():
        calls.append(1)
        raise ConnectionError(f"attempt {len(calls)}")

    with pytest.raises(ConnectionError, match="attempt 3"):
        retry(fail, attempts=3)
    assert len(calls) == 3


def test_a_later_success_is_returned():
    results = iter([ValueError("no"), 7])

    def flaky():
        value = next(results)
        if isinstance(value, Exception):
            raise value
        return value

    assert retry(flaky) == 7
