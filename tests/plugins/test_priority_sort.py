"""PrioritySort: higher priority first, then the earlier queue timestamp."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugins.priority_sort import SPEC
from plugins.priority_sort import PrioritySort
from scheduler.framework import QueuedPodInfo
from scheduler.framework import QueueSortPlugin
from scheduler.testing import FakeHandle
from scheduler.testing import make_pod


def queued(name: str, priority: int | None, timestamp: float) -> QueuedPodInfo:
    builder = make_pod(name)
    if priority is not None:
        builder.priority(priority)
    return QueuedPodInfo(builder.obj(), timestamp)


PLUGIN = PrioritySort(None, FakeHandle())


def test_spec() -> None:
    assert SPEC.name == PrioritySort.name == "PrioritySort"
    assert SPEC.args_model is None
    assert isinstance(PLUGIN, QueueSortPlugin)
    assert SPEC.extension_points == ["QueueSort"]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (queued("high", 10, 5.0), queued("low", 1, 1.0), True),
        (queued("low", 1, 1.0), queued("high", 10, 5.0), False),
        (queued("early", 3, 1.0), queued("late", 3, 2.0), True),
        (queued("late", 3, 2.0), queued("early", 3, 1.0), False),
        (queued("same", 3, 1.0), queued("same-too", 3, 1.0), False),
        (queued("unset", None, 1.0), queued("negative", -1, 0.0), True),
        (queued("unset", None, 2.0), queued("zero", 0, 1.0), False),
    ],
    ids=[
        "higher-priority-first",
        "lower-priority-later",
        "equal-priority-earlier-first",
        "equal-priority-later-second",
        "identical-is-not-less",
        "unset-priority-is-zero",
        "unset-equals-zero",
    ],
)
def test_less(a: QueuedPodInfo, b: QueuedPodInfo, expected: bool) -> None:
    assert PLUGIN.less(a, b) is expected


def test_sorting_a_queue() -> None:
    pods = [
        queued("c", 0, 3.0),
        queued("a", 100, 9.0),
        queued("d", None, 1.0),
        queued("b", 100, 2.0),
        queued("e", -5, 0.0),
    ]

    def compare(x: QueuedPodInfo, y: QueuedPodInfo) -> int:
        return -1 if PLUGIN.less(x, y) else (1 if PLUGIN.less(y, x) else 0)

    ordered = sorted(pods, key=functools.cmp_to_key(compare))
    assert [p.pod.name for p in ordered] == ["b", "a", "d", "c", "e"]


@given(
    st.tuples(st.one_of(st.none(), st.integers(-5, 5)), st.sampled_from([0.0, 1.0, 2.5])),
    st.tuples(st.one_of(st.none(), st.integers(-5, 5)), st.sampled_from([0.0, 1.0, 2.5])),
)
def test_sort_key_orders_exactly_as_less(
    first: tuple[int | None, float], second: tuple[int | None, float]
) -> None:
    a, b = queued("a", *first), queued("b", *second)
    assert (PLUGIN.sort_key(a) < PLUGIN.sort_key(b)) == PLUGIN.less(a, b)
    assert (PLUGIN.sort_key(b) < PLUGIN.sort_key(a)) == PLUGIN.less(b, a)
