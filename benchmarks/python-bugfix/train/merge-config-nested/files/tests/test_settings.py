from settings import merge


def test_nested_settings_are_merged_key_by_key():
    base = {"db": {"host": "x", "port": 5432}, "debug": False}
    assert merge(base, {"db": {"port": 6543}}) == {"db": {"host": "x", "port": 6543}, "debug": False}


def test_the_inputs_are_left_as_they_were():
    base, override = {"db": {"host": "x"}}, {"db": {"host": "y"}}
    merge(base, override)
    assert base == {"db": {"host": "x"}} and override == {"db": {"host": "y"}}
