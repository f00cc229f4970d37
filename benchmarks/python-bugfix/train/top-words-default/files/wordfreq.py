"""The most common words of a text."""

from collections import Counter


def top_words(text, n=1):
    """The `n` most common words of `text` (ten by default), most common first."""
    return [word for word, _ in Counter(text.lower().split()).most_common(n)]
