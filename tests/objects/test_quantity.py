"""Quantities: upstream's parse for every sane input, bounded work and a clear error otherwise."""

from __future__ import annotations

import math
import time
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.quantity import QuantityError
from scheduler.objects.quantity import int_value
from scheduler.objects.quantity import milli_value
from scheduler.objects.quantity import parse_quantity
from scheduler.objects.resources import parse_resource_list


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("100m", Fraction(1, 10)),
        ("1.5Gi", Fraction(3 * 2**29)),
        ("2e3", Fraction(2000)),
        ("1.", Fraction(1)),
        (".5Mi", Fraction(2**19)),
        ("-1k", Fraction(-1000)),
        ("0e999999999", Fraction(0)),
        # Upstream rounds a non-zero value up to a whole nano, away from zero.
        ("0.1n", Fraction(1, 10**9)),
        ("1.5n", Fraction(2, 10**9)),
        ("1e-999999999", Fraction(1, 10**9)),
        ("0." + "0" * 100_000 + "1", Fraction(1, 10**9)),
        ("0." + "9" * 5_000, Fraction(1)),
        (7, Fraction(7)),
        (0.25, Fraction(1, 4)),
    ],
)
def test_parses_like_upstream(text: str | int | float, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "1e300",
        "1e999999999",
        "9" * 41,
        "1" * 30_000,
        pytest.param(10**5_000, id="int-of-5001-digits"),
        1e300,
    ],
)
def test_values_of_forty_digits_or_more_are_refused_at_once(text: str | int | float) -> None:
    started = time.perf_counter()
    with pytest.raises(QuantityError, match="too large"):
        parse_quantity(text)
    assert time.perf_counter() - started < 0.5


@pytest.mark.parametrize(
    "value", ["", ".", "e5", "1e", "1Ki5", "lots", "1" * 30_000 + "x", float("inf"), True, [1]]
)
def test_what_is_not_a_quantity_is_a_quantity_error(value: object) -> None:
    started = time.perf_counter()
    with pytest.raises(QuantityError):
        parse_quantity(value)  # type: ignore[arg-type]
    assert time.perf_counter() - started < 0.5


def test_units_round_up_like_milli_value_and_value() -> None:
    assert milli_value("1.0001m") == 2
    assert int_value("1.5") == 2


@pytest.mark.parametrize(
    ("resource", "quantity"), [("cpu", "5Ei"), ("cpu", "9223372036854776"), ("memory", "8Ei")]
)
def test_a_resource_beyond_int64_in_scheduler_units_names_the_field(
    resource: str, quantity: str
) -> None:
    with pytest.raises(InvalidObjectError, match=rf"status\.allocatable\.{resource}: .*int64"):
        parse_resource_list({resource: quantity}, "status.allocatable")


def test_the_largest_int64_is_still_counted() -> None:
    assert parse_resource_list({"memory": str(2**63 - 1)}) == {"memory": 2**63 - 1}
    assert parse_resource_list({"cpu": "9223372036854775807m"}) == {"cpu": 2**63 - 1}


@given(
    st.decimals(min_value=-(10**30), max_value=10**30, allow_nan=False, places=12),
    st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi"]),
)
def test_exact_for_plain_decimals(number: Decimal, suffix: str) -> None:
    scale: dict[str, Fraction] = {
        "": Fraction(1),
        "m": Fraction(1, 1000),
        "k": Fraction(1000),
        "M": Fraction(10**6),
        "G": Fraction(10**9),
        "Ki": Fraction(2**10),
        "Mi": Fraction(2**20),
        "Gi": Fraction(2**30),
    }
    exact = Fraction(number) * scale[suffix]
    nanos = exact * 10**9
    # Upstream rounds to a whole nano away from zero.
    rounded = Fraction(math.ceil(nanos) if exact >= 0 else math.floor(nanos), 10**9)
    assert parse_quantity(f"{number:f}{suffix}") == rounded
