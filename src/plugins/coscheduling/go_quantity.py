"""Go's resource.Quantity, as far as scheduler-plugins' minResources gap shows it.

CheckClusterResource takes each node's free room off a PodGroup's minResources with
Quantity.Sub and reports what is left as `resource gap: %v` of the ResourceList. %v does not
print a Quantity as "92": its String method needs a pointer, which a map value is not, so the
fields are printed as they are, `{{92000 -3} {<nil>}  DecimalSI}`: an int64 amount of
92000 x 10^-3, no big decimal, no cached string, the format. This module keeps that form, so
our gap reads as upstream's: how ParseQuantity reads the text, how Sub changes it, how %v
prints it.

Go keeps some amounts as a big decimal instead (a fraction of a binary suffix such as "1.5Gi",
or an amount past int64 on the way) and %v then prints a pointer address, which no other
process can reproduce; such a quantity prints its exact amount in the address's place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from scheduler.objects.quantity import parse_quantity
from scheduler.objects.resources import CPU
from scheduler.objects.resources import EPHEMERAL_STORAGE
from scheduler.objects.resources import MEMORY
from scheduler.objects.resources import PODS

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
# The digits an int64 is sure to hold; past them ParseQuantity goes to a big decimal.
_INT64_DIGITS = 18
_NANO_SCALE = -9
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9}
_DECIMAL_SUFFIXES |= {"T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
# Sign, digits after leading zeros, fraction, suffix (already checked by our own parser).
_PARTS = re.compile(r"([+-]?)0*(\d*)(?:\.(\d*))?(.*)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class GoQuantity:
    """An int64 amount (value x 10^scale) with its format and the string Go caches for a
    canonical parse; `big` holds the amount instead where Go keeps a big decimal."""

    value: int = 0
    scale: int = 0
    format: str = DECIMAL_SI
    cached: str = ""
    big: Fraction | None = None

    @property
    def is_zero(self) -> bool:
        return self.big == 0 if self.big is not None else self.value == 0

    def __str__(self) -> str:
        """%v of the struct: its int64 amount, big decimal, cached string and format."""
        if self.big is None:
            return f"{{{{{self.value} {self.scale}}} {{<nil>}} {self.cached} {self.format}}}"
        return f"{{{{0 0}} {{{_decimal_text(self.big)}}} {self.cached} {self.format}}}"


def new_quantity(value: int, format: str = DECIMAL_SI) -> GoQuantity:
    """resource.NewQuantity: a whole number, nothing cached."""
    return GoQuantity(value, 0, format)


def parse_go_quantity(text: str) -> GoQuantity:
    """A quantity as resource.ParseQuantity holds it; `text` is one our own parser accepted."""
    text = text.strip()
    if text == "0":
        return GoQuantity(0, 0, DECIMAL_SI, "0")
    parts = _PARTS.fullmatch(text)
    assert parts is not None  # the pattern matches any string
    sign, num, denom, suffix = parts.groups()
    num, denom = num or "0", denom or ""
    format, exponent = _interpret(suffix)
    fast = _int64_form(text, num, denom, format, exponent, negative=sign == "-")
    if fast is not None:
        return fast
    amount = parse_quantity(text)
    if format == BINARY_SI and 0 < amount < 1:
        format = DECIMAL_SI  # as ParseQuantity does, so a tiny amount is not rounded away
    return GoQuantity(format=format, big=amount)


def _interpret(suffix: str) -> tuple[str, int]:
    """The format and power (of 10, or of 2 for a binary suffix) a suffix stands for."""
    if suffix in _DECIMAL_SUFFIXES:
        return DECIMAL_SI, _DECIMAL_SUFFIXES[suffix]
    if suffix in _BINARY_SUFFIXES:
        return BINARY_SI, _BINARY_SUFFIXES[suffix]
    return DECIMAL_EXPONENT, int(suffix[1:])


def _int64_form(
    text: str, num: str, denom: str, format: str, exponent: int, *, negative: bool
) -> GoQuantity | None:
    """ParseQuantity's fast path; None where it falls back to a big decimal."""
    mantissa = 1
    if format == BINARY_SI:
        if denom or exponent < 0:
            return None
        scale = 0
        mantissa = 1 << exponent
        # Decimal digits the binary multiplier takes up (about 3 for every 10 bits).
        precision = 15 - len(num) - exponent * 3 // 10 - 1
    else:
        scale = exponent
        precision = _INT64_DIGITS - len(num) - len(denom)
    scale -= len(denom)
    if precision < 0 or scale < _NANO_SCALE:
        return None
    shifted = num + denom
    value = int(shifted)
    result = value * mantissa
    if result > _INT64_MAX:
        return None
    return GoQuantity(
        -result if negative else result,
        scale,
        format,
        text if _is_canonical(shifted, value, format, exponent, scale) else "",
    )


def _is_canonical(shifted: str, value: int, format: str, exponent: int, scale: int) -> bool:
    """Whether ParseQuantity keeps the text as the quantity's cached string."""
    if format == BINARY_SI:
        return exponent % 10 == 0 and value & 0x07 != 0
    return scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"


def minus_each(quantity: GoQuantity, amounts: Iterable[int], like: GoQuantity) -> GoQuantity:
    """`quantity` after Quantity.Sub of each amount in turn, every amount of `like`'s scale
    and format (one node's free room after another)."""
    value, scale, format, big = quantity.value, quantity.scale, quantity.format, quantity.big
    touched = False
    for amount in amounts:
        touched = True
        if (big == 0) if big is not None else value == 0:
            # Sub gives a zero quantity the format of what it takes away.
            format = like.format
        if big is None:
            added = _int64_add(value, scale, -amount, like.scale)
            if added is not None:
                value, scale = added
                continue
            big = Fraction(value) * Fraction(10) ** scale
            value, scale = 0, 0
        big -= Fraction(amount) * Fraction(10) ** like.scale
    # Any Sub drops the cached string, even of nothing.
    cached = "" if touched else quantity.cached
    return GoQuantity(value, scale, format, cached, big)


def _int64_add(value: int, scale: int, other: int, other_scale: int) -> tuple[int, int] | None:
    """int64Amount.Add: the sum at the finer of the two scales; None where int64 overflows
    (Go then goes on with a big decimal)."""
    if other == 0:
        return value, scale
    if value == 0:
        return other, other_scale
    if scale > other_scale:
        value, scale = value * 10 ** (scale - other_scale), other_scale
    elif other_scale > scale:
        other *= 10 ** (other_scale - scale)
    if not all(_INT64_MIN <= n <= _INT64_MAX for n in (value, other, value + other)):
        return None
    return value + other, scale


def node_room_form(resource: str) -> GoQuantity:
    """The scale and format of a node's free room of `resource` as scheduler-plugins'
    util.ResourceList builds it (millicores for CPU, bytes and counts as binary)."""
    if resource == CPU:
        return GoQuantity(0, -3, DECIMAL_SI)
    if resource in (MEMORY, EPHEMERAL_STORAGE, PODS) or resource.startswith("hugepages-"):
        return GoQuantity(0, 0, BINARY_SI)
    return GoQuantity(0, 0, DECIMAL_SI)


def resource_list_text(quantities: Mapping[str, GoQuantity]) -> str:
    """%v of a ResourceList: `map[name:quantity ...]`, names sorted as fmt sorts map keys."""
    entries = " ".join(f"{name}:{quantities[name]}" for name in sorted(quantities))
    return f"map[{entries}]"


def _decimal_text(amount: Fraction) -> str:
    """An exact decimal (amounts are whole nanos at most); `1.5`, `-3`."""
    if amount.denominator == 1:
        return str(amount.numerator)
    nanos = amount * 10**9
    sign = "-" if nanos < 0 else ""
    whole, part = divmod(abs(int(nanos)), 10**9)
    return f"{sign}{whole}.{part:09d}".rstrip("0")
