"""go_sort_slice against orders recorded from Go's sort.Slice, and the properties any sort has."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugins.helpers.go_sort import go_sort_slice
from tests.data import DATA

ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
RECORDED = DATA / "go_sort_slice_orders.txt"

Element = tuple[int, int]  # (index in the input, code)


def more_important(x: Element, y: Element) -> bool:
    """The recording's MoreImportantPod over codes (see the file's header)."""
    priority_x, priority_y = x[1] // 5, y[1] // 5
    if priority_x != priority_y:
        return priority_x > priority_y
    start_x, start_y = x[1] % 5 - 1, y[1] % 5 - 1
    if start_x < 0:
        # "Now" when asked, later than any start, and earlier than the next "now" read.
        return start_y < 0
    return start_y < 0 or start_x < start_y


LESS: dict[str, Callable[[Element, Element], bool]] = {
    "k": lambda x, y: x[1] < y[1],
    "i": more_important,
    "r": lambda x, y: not more_important(x, y),
}


def recorded_cases() -> list[tuple[str, str, str]]:
    lines = RECORDED.read_text().splitlines()
    cases = [line.split(":") for line in lines if line and not line.startswith("#")]
    return [(kind, items, order) for kind, items, order in cases]


def test_the_recording_covers_every_size_and_kind() -> None:
    cases = recorded_cases()
    assert len(cases) >= 300
    assert {len(items) for _, items, _ in cases} == set(range(61))
    assert {kind for kind, _, _ in cases} == set(LESS)


@pytest.mark.parametrize("kind", sorted(LESS))
def test_orders_as_go_sort_slice_does(kind: str) -> None:
    differing = []
    for case_kind, items, order in recorded_cases():
        if case_kind != kind:
            continue
        elements = [(i, ALPHABET.index(c)) for i, c in enumerate(items)]
        got = "".join(ALPHABET[i] for i, _ in go_sort_slice(elements, LESS[kind]))
        if got != order:
            differing.append(f"{items}: Go {order}, ours {got}")
    assert not differing, "\n".join(differing)


def test_go_breaks_ties_of_longer_slices_unlike_a_stable_sort() -> None:
    # What the recording is for: past twelve elements Go's order of equal elements is its own.
    def stable(items: str) -> str:
        indices = sorted(range(len(items)), key=lambda i: ALPHABET.index(items[i]))
        return "".join(ALPHABET[i] for i in indices)

    unstable = [
        items for kind, items, order in recorded_cases() if kind == "k" and order != stable(items)
    ]
    assert unstable
    assert min(len(items) for items in unstable) > 12


@given(st.lists(st.integers(0, 4), max_size=80))
def test_a_permutation_sorted_by_a_strict_weak_order(keys: list[int]) -> None:
    elements = list(enumerate(keys))
    result = go_sort_slice(elements, lambda x, y: x[1] < y[1])
    assert sorted(result) == elements
    assert [k for _, k in result] == sorted(keys)


@given(st.lists(st.integers(0, 3), max_size=12))
def test_up_to_twelve_elements_is_a_stable_insertion_sort(keys: list[int]) -> None:
    elements = list(enumerate(keys))
    result = go_sort_slice(elements, lambda x, y: x[1] < y[1])
    assert result == sorted(elements, key=lambda e: e[1])


@given(st.lists(st.integers(0, 19), max_size=80))
def test_an_inconsistent_less_still_yields_a_permutation(codes: list[int]) -> None:
    # MoreImportantPod between unstarted pods answers "yes" both ways; the sort must still
    # end, return every element once, and put higher priorities first.
    elements = list(enumerate(codes))
    result = go_sort_slice(elements, more_important)
    assert sorted(result) == elements
    priorities = [code // 5 for _, code in result]
    assert priorities == sorted(priorities, reverse=True)
