"""Invoice totals in euros, rounded to the cent."""


def invoice_total(amounts):
    """The sum of `amounts`, rounded to cents, half a cent up."""
    return round(sum(amounts), 2)
