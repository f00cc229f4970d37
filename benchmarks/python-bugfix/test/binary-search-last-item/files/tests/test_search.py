from search import find


def test_every_item_is_found_where_it_is():
    items = [1, 3, 5, 7, 9, 11]
    assert [find(items, item) for item in items] == list(range(len(items)))


def test_a_single_item_list():
    assert find([4], 4) == 0


def test_a_missing_item_is_minus_one():
    assert find([1, 3, 5], 4) == -1
    assert find([], 1) == -1
