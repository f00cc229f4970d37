from dedupe import unique


def test_first_occurrences_keep_their_order():
    assert unique(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]


def test_numbers_keep_their_order():
    assert unique([3, 1, 3, 2, 1]) == [3, 1, 2]
