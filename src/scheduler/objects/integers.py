"""Integer fields of API objects, held to the Go widths the API declares them with.

The API server never stores a priority or weight outside its int32, but objects also come from
simulation files; a value past the width would otherwise surface later, far from its object,
as an overflow inside a numpy column.
"""

from __future__ import annotations

from typing import Any


def bounded_int(value: Any, bits: int, field: str) -> int:
    """`value` as an int that fits in a signed Go integer of `bits` bits; ValueError names
    `field` otherwise."""
    try:
        number = int(value)
    except (ValueError, TypeError, OverflowError) as exc:  # OverflowError: int(inf)
        shown = repr(value) if len(repr(value)) <= 40 else f"{repr(value)[:37]}..."
        raise ValueError(f"{field}: {shown} is not an integer") from exc
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    if not low <= number <= high:
        raise ValueError(f"{field}: {number} does not fit in an int{bits}")
    return number
