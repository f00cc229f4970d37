"""Checks fix-mean: exits 0 when the task is done."""

import sys

sys.path.insert(0, "/app")
from stats import mean

assert mean([1, 2]) == 1.5
assert mean([4]) == 4
assert abs(mean([0.1, 0.2, 0.3]) - 0.2) < 1e-9
try:
    mean([])
except ValueError:
    pass
else:
    raise AssertionError("mean([]) did not raise ValueError")
