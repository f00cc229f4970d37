from rows import split_row


def test_a_quoted_comma_stays_in_its_field():
    assert split_row('apple,"pear, ripe",plum') == ["apple", "pear, ripe", "plum"]


def test_a_plain_row():
    assert split_row("a,b,c\n") == ["a", "b", "c"]
