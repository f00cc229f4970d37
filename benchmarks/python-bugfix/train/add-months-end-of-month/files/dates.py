"""Calendar arithmetic for subscriptions."""

from datetime import date


def add_months(day, months):
    """`day` moved `months` months on (a negative number goes back)."""
    index = day.month - 1 + months
    return date(day.year + index // 12, index % 12 + 1, day.day)
