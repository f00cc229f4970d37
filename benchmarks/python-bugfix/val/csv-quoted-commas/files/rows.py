"""One line of a CSV export as its fields."""


def split_row(line):
    """The fields of one CSV line; a quoted field may hold commas."""
    return [field.strip('"') for field in line.rstrip("\n").split(",")]
