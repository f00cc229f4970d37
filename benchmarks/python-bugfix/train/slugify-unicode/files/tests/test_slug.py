from slug import slugify


def test_accents_are_dropped_not_the_letters():
    assert slugify("Crème Brûlée") == "creme-brulee"
    assert slugify("Ångström Über") == "angstrom-uber"


def test_punctuation_becomes_one_hyphen():
    assert slugify("Hello, World!") == "hello-world"
