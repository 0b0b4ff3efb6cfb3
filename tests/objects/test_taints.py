"""Taints and tolerations: the toleration rule as the API defines it."""

from __future__ import annotations

import pytest

from scheduler.objects.taints import NO_EXECUTE
from scheduler.objects.taints import NO_SCHEDULE
from scheduler.objects.taints import PREFER_NO_SCHEDULE
from scheduler.objects.taints import Taint
from scheduler.objects.taints import Toleration
from scheduler.objects.taints import decimal_integer
from scheduler.objects.taints import first_untolerated
from scheduler.objects.taints import parse_taint
from scheduler.objects.taints import parse_toleration

GPU = Taint("gpu", "true", NO_SCHEDULE)


@pytest.mark.parametrize(
    ("toleration", "tolerates"),
    [
        (Toleration("gpu", "Equal", "true", NO_SCHEDULE), True),
        (Toleration("gpu", "Equal", "false", NO_SCHEDULE), False),
        (Toleration("gpu", "Exists", "", NO_SCHEDULE), True),
        (Toleration("gpu", "Exists", "", ""), True),  # no effect: every effect
        (Toleration("gpu", "Exists", "", NO_EXECUTE), False),
        (Toleration("", "Exists", "", ""), True),  # empty key with Exists: every taint
        (Toleration("", "Equal", "true", ""), False),  # invalid in the API: matches nothing
        (Toleration("other", "Exists", "", ""), False),
        (Toleration("gpu", "", "true", ""), True),  # no operator: Equal
    ],
)
def test_the_toleration_rule(toleration: Toleration, tolerates: bool) -> None:
    assert toleration.tolerates(GPU) is tolerates


def test_parsing_fills_the_apis_defaults() -> None:
    assert parse_toleration({"key": "gpu"}) == Toleration("gpu", "Equal", "", "")
    assert parse_toleration({"operator": "Exists", "value": None}) == Toleration(
        "", "Exists", "", ""
    )
    assert parse_taint({"key": "gpu", "effect": NO_SCHEDULE}) == Taint("gpu", "", NO_SCHEDULE)


def test_a_taint_reads_as_upstreams_reason_text_shows_it() -> None:
    assert str(GPU) == "{gpu: true}"


def test_first_untolerated_looks_only_at_the_given_effects() -> None:
    soft = Taint("busy", "", PREFER_NO_SCHEDULE)
    hard = Taint("dedicated", "db", NO_SCHEDULE)
    effects = frozenset({NO_SCHEDULE, NO_EXECUTE})
    assert first_untolerated([soft, GPU, hard], [], effects) == GPU
    tolerate_gpu = [Toleration("gpu", "Exists", "", "")]
    assert first_untolerated([soft, GPU, hard], tolerate_gpu, effects) == hard
    assert first_untolerated([soft], [], effects) is None


# ---- Lt and Gt (TaintTolerationComparisonOperators) ----------------------------------------

LEVEL = Taint("sla", "50", NO_SCHEDULE)


@pytest.mark.parametrize(
    ("operator", "bound", "with_gate"),
    [
        ("Gt", "40", True),  # 50 > 40
        ("Gt", "50", False),
        ("Gt", "-7", True),
        ("Lt", "60", True),  # 50 < 60
        ("Lt", "50", False),
        ("Lt", "051", False),  # not written the plain way: tolerates nothing
        ("Lt", "+60", False),
        ("Lt", "60.0", False),
        ("Lt", "9223372036854775808", False),  # beyond int64, as Go's ParseInt refuses
        ("Ge", "40", False),  # no such operator
    ],
)
def test_lt_and_gt_compare_the_values_as_integers_with_the_gate(
    operator: str, bound: str, with_gate: bool
) -> None:
    toleration = Toleration("sla", operator, bound, NO_SCHEDULE)
    assert toleration.tolerates(LEVEL, comparisons=True) is with_gate
    # Without the gate the operators are unknown, and an unknown operator tolerates nothing.
    assert toleration.tolerates(LEVEL) is False


@pytest.mark.parametrize(
    ("taint_value", "tolerates"),
    [("41", True), ("40", False), ("", False), ("-0", False), ("4e1", False), ("٤١", False)],
)
def test_a_taint_value_that_is_no_plain_integer_is_never_compared(
    taint_value: str, tolerates: bool
) -> None:
    toleration = Toleration("sla", "Gt", "40", "")
    assert toleration.tolerates(Taint("sla", taint_value, NO_SCHEDULE), comparisons=True) is (
        tolerates
    )


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("0", 0),
        ("7", 7),
        ("-7", -7),
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
        ("-", None),
        ("", None),
        ("00", None),
        ("-0", None),
        (" 1", None),
        ("1_000", None),
    ],
)
def test_decimal_integers_are_read_strictly(text: str, number: int | None) -> None:
    assert decimal_integer(text) == number
