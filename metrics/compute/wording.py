"""Numbers as the decision's reasons write them: three decimals and a true minus sign."""

import math


def number(value: float) -> str:
    """0.125 → "0.125", -0.01 → "−0.010", NaN → "n/a"."""
    return "n/a" if math.isnan(value) else f"{value:.3f}".replace("-", "\N{MINUS SIGN}")


def signed(value: float) -> str:
    """0.031 → "+0.031", -0.031 → "−0.031"."""
    return f"{value:+.3f}".replace("-", "\N{MINUS SIGN}")
