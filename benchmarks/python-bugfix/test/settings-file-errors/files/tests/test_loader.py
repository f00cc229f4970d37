import pytest

from loader import load_settings


def test_a_malformed_file_is_an_error_naming_it(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text('{"debug": true,}')
    with pytest.raises(ValueError, match="settings.json"):
        load_settings(path)


def test_a_missing_file_gives_no_settings(tmp_path):
    assert load_settings(tmp_path / "absent.json") == {}


def test_a_good_file_is_read(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text('{"debug": true}')
    assert load_settings(path) == {"debug": True}
