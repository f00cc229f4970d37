from invoice import invoice_total


def test_half_a_cent_rounds_up():
    assert invoice_total([1.005]) == 1.01
    assert invoice_total([2.675]) == 2.68


def test_a_sum_of_several_amounts():
    assert invoice_total([0.1, 0.2, 0.3]) == 0.6


def test_an_empty_invoice_is_zero():
    assert invoice_total([]) == 0.0
