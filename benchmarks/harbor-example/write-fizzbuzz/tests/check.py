"""Checks write-fizzbuzz: exits 0 when the task is done."""

import sys

sys.path.insert(0, "/app")
from fizzbuzz import fizzbuzz

assert fizzbuzz(5) == ["1", "2", "Fizz", "4", "Buzz"]
assert fizzbuzz(15)[-1] == "FizzBuzz"
assert fizzbuzz(0) == []
assert len(fizzbuzz(100)) == 100 and fizzbuzz(100)[98] == "Fizz"
