"""Gregorian leap years."""


def is_leap(year):
    """Whether `year` has a 29 February."""
    return year % 4 == 0
