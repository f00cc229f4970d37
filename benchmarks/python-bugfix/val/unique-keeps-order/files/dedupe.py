"""Removing repeated items."""


def unique(items):
    """`items` without repeats, each kept where it first occurs."""
    return list(set(items))
