"""The built-in scorers of QA suites, and scorers named by their dotted path."""

import pytest

from wikiskill.benchmarks.scoring import contains, exact, get_scorer, numeric, regex
from wikiskill.core.errors import BenchmarkError


def test_scorers():
    assert exact("The  Answer.", "answer") == 1.0 and exact(None, "a") == 0.0
    assert numeric("about 1,234.0 items", "1234") == 1.0 and numeric("12", "13") == 0.0
    assert contains("it is Paris, France", "paris") == 1.0
    assert regex("ab12", r"ab\d+") == 1.0
    assert get_scorer("wikiskill.benchmarks.scoring:exact") is exact
    with pytest.raises(BenchmarkError):
        get_scorer("nope")
