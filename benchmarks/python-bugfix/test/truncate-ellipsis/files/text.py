"""Shortening text for previews."""


def truncate(text, limit):
    """`text` cut to at most `limit` characters, ending in `...` when it was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + "..."
