from tagging import Post


def test_a_new_post_has_no_tags_even_after_another_post_was_tagged():
    Post("a").add_tag("x")
    assert Post("b").tags == []


def test_tags_given_at_creation_are_kept_without_duplicates():
    post = Post("c", ["news"]).add_tag("news").add_tag("tech")
    assert post.tags == ["news", "tech"]
