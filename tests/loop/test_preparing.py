"""Games generated before a command's tasks can run are announced, with how many, before the bar."""

import io

from rich.console import Console

from wikiskill.loop.progress import RichReporter


def test_generating_games_is_announced_with_their_count_even_where_no_bar_is_drawn():
    out = io.StringIO()
    reporter = RichReporter(Console(file=out, width=100))  # not a terminal: no live bar
    for done in range(4):
        reporter.preparing(done, 3)
    assert out.getvalue().startswith("Generating 3 game(s) before their tasks can run (once; later runs reuse them).\n")
