"""Small maths helpers."""


def factorial(n):
    """n! for a whole number n >= 0."""
    if n == 1:
        return 1
    return n * factorial(n - 1)
