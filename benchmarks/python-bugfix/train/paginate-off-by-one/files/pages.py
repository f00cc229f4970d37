"""Splitting a list into pages for display."""


def paginate(items, page, per_page):
    """The items on `page` (numbered from 1), `per_page` at a time."""
    if page < 1 or per_page < 1:
        raise ValueError("page and per_page start at 1")
    start = page * per_page
    return items[start:start + per_page]
