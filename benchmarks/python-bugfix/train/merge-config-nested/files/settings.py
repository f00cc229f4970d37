"""Layered settings: defaults, then overrides."""


def merge(base, override):
    """`base` with `override`'s keys on top; nested dictionaries merged key by key."""
    merged = dict(base)
    merged.update(override)
    return merged
