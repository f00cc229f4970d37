"""Calling a flaky function again until it works."""


def retry(func, attempts=3):
    """The result of the first call of `func` that does not raise, trying at most `attempts` times."""
    for _ in range(attempts):
        try:
            return func()
        except Exception:
            continue
