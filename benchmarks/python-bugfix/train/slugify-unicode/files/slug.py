"""URL slugs from titles."""

import re


def slugify(title):
    """Lowercase ASCII words of `title` joined by hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
