"""Elapsed time for the timer display."""


def format_elapsed(seconds):
    """`H:MM:SS`, or `M:SS` under an hour."""
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}:{minutes}:{secs}"
    return f"{minutes}:{secs}"
