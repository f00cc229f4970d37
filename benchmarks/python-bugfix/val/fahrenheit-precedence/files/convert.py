"""Temperature units."""


def fahrenheit_to_celsius(fahrenheit):
    """Degrees Fahrenheit in degrees Celsius."""
    return fahrenheit - 32 * 5 / 9
