"""Taints and tolerations: the toleration rule as the API defines it."""

from __future__ import annotations

import pytest

from scheduler.objects.taints import NO_EXECUTE
from scheduler.objects.taints import NO_SCHEDULE
from scheduler.objects.taints import PREFER_NO_SCHEDULE
from scheduler.objects.taints import Taint
from scheduler.objects.taints import Toleration
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
