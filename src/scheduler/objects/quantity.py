"""Kubernetes resource quantities ("100m", "1.5Gi", "2e3") as exact numbers.

Parsing follows resource.ParseQuantity: any number of digits is accepted and a non-zero value
is rounded up, away from zero, to a whole nano. Two bounds keep the work small whatever the
input: a value of 10^MAX_DIGITS or more is refused outright (no resource the scheduler counts
comes near it, and "1e999999999" must not build a billion-digit number), and digits beyond
the first MAX_DIGITS + SIGNIFICANT_DIGITS only round the last kept digit up (they are far below
a nano).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
# Unambiguous alternatives, so a long digit string is matched in linear time.
_PATTERN = re.compile(
    r"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?"
)
MAX_DIGITS = 40
SIGNIFICANT_DIGITS = 60
_NANO = Fraction(1, 10**9)
_LIMIT = 10**MAX_DIGITS


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity, or one too large to count."""


def _shortened(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(f"{text[:37]}...")


def _too_large(text: str) -> QuantityError:
    return QuantityError(f"quantity {_shortened(text)} is too large (10^{MAX_DIGITS} or more)")


def _round_up_to_nano(value: Fraction) -> Fraction:
    if value == 0:
        return value
    nanos = math.ceil(abs(value) / _NANO)
    return nanos * _NANO if value > 0 else -nanos * _NANO


def parse_quantity(value: str | int | float) -> Fraction:
    """Parse a quantity into an exact Fraction of base units."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise QuantityError(f"quantities must be numbers or strings, not {value!r}")
    if isinstance(value, int):
        if abs(value) >= _LIMIT:
            raise _too_large(f"an integer of {value.bit_length()} bits")
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"quantities must be finite numbers, not {value!r}")
        value = repr(value)
    text = value.strip()
    match = _PATTERN.fullmatch(text)
    if match is None or not (match.group(2) or match.group(3)):
        raise QuantityError(
            f"quantities must match the regular expression of a quantity: {_shortened(text)}"
        )
    sign, whole, fraction, exponent, suffix = match.groups()
    fraction = fraction or ""
    # value = int(digits) * 10^power (* 2^binary), digits without leading zeros.
    digits = (whole + fraction).lstrip("0")
    if not digits:
        return Fraction(0)
    binary = _BINARY.get(suffix or "", 0) if exponent is None else 0
    power = _DECIMAL.get(suffix or "", 0) if exponent is None else _bounded_exponent(exponent)
    power -= len(fraction)
    # The value is at least 10^(top - 1) and below 10^(top + 1).
    top = len(digits) + power + len(str(2**binary)) - 1
    if top > MAX_DIGITS + 1:
        raise _too_large(text)
    if top < -2 * MAX_DIGITS:
        # Far below a nano, which is what any non-zero value rounds up to.
        return _NANO if sign != "-" else -_NANO
    kept = MAX_DIGITS + SIGNIFICANT_DIGITS
    if len(digits) > kept:
        # Digits this far down only round the value up (they are far below a nano).
        dropped = digits[kept:]
        digits = str(int(digits[:kept]) + (1 if dropped.strip("0") else 0))
        power += len(dropped)
    number = Fraction(int(digits)) * Fraction(10) ** power * 2**binary
    if number >= _LIMIT:
        raise _too_large(text)
    return _round_up_to_nano(-number if sign == "-" else number)


def _bounded_exponent(text: str) -> int:
    """The exponent, clamped to a range past which the size checks decide anyway."""
    digits = text.lstrip("+-").lstrip("0") or "0"
    negative = text.startswith("-")
    if len(digits) > 6:
        return -(10**6) if negative else 10**6
    return -int(digits) if negative else int(digits)


def milli_value(value: str | int | float) -> int:
    """Value in thousandths, rounded up like resource.Quantity.MilliValue (CPU in millicores)."""
    return math.ceil(parse_quantity(value) * 1000)


def int_value(value: str | int | float) -> int:
    """Value rounded up to a whole unit, like resource.Quantity.Value (memory in bytes)."""
    return math.ceil(parse_quantity(value))
