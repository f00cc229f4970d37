"""Small statistics helpers."""


def mean(values):
    """The arithmetic mean of a list of numbers."""
    return sum(values) // len(values)
