from datetime import date

from dates import add_months


def test_the_31st_renews_on_the_last_day_of_february_in_a_leap_year():
    assert add_months(date(2024, 1, 31), 1) == date(2024, 2, 29)


def test_the_31st_renews_on_the_30th_of_april():
    assert add_months(date(2023, 3, 31), 1) == date(2023, 4, 30)


def test_months_carry_into_the_next_year():
    assert add_months(date(2023, 11, 15), 3) == date(2024, 2, 15)
