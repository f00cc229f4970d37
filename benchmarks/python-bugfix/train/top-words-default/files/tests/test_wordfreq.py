from wordfreq import top_words

TEXT = " ".join(f"w{i} " * (20 - i) for i in range(12))


def test_ten_words_by_default():
    assert top_words(TEXT) == [f"w{i}" for i in range(10)]


def test_n_words_when_asked():
    assert top_words("a b b c c c", 2) == ["c", "b"]
