"""KeyedHeap: order by a caller's `less`, unique keys, update and delete anywhere."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from scheduler.backend.queue.heap import KeyedHeap


@dataclass
class Item:
    key: str
    rank: int


def by_rank(a: Item, b: Item) -> bool:
    return (a.rank, a.key) < (b.rank, b.key)


def new_heap() -> KeyedHeap[Item]:
    return KeyedHeap(lambda item: item.key, by_rank)


def drain(heap: KeyedHeap[Item]) -> list[str]:
    out = []
    while (item := heap.pop()) is not None:
        out.append(item.key)
    return out


def test_pops_in_less_order_and_reports_membership() -> None:
    heap = new_heap()
    for key, rank in [("c", 3), ("a", 1), ("d", 4), ("b", 2)]:
        heap.add_or_update(Item(key, rank))
    assert len(heap) == 4
    assert "b" in heap and "z" not in heap
    peeked = heap.peek()
    assert peeked is not None and peeked.key == "a"
    assert drain(heap) == ["a", "b", "c", "d"]
    assert heap.pop() is None and heap.peek() is None


def test_update_resorts_an_existing_key_instead_of_duplicating_it() -> None:
    heap = new_heap()
    for key, rank in [("a", 1), ("b", 2), ("c", 3)]:
        heap.add_or_update(Item(key, rank))
    heap.add_or_update(Item("c", 0))  # moves up
    heap.add_or_update(Item("a", 9))  # moves down
    assert len(heap) == 3
    assert drain(heap) == ["c", "b", "a"]


def test_delete_from_the_middle_keeps_the_order() -> None:
    heap = new_heap()
    for rank in range(10):
        heap.add_or_update(Item(f"k{rank}", rank))
    deleted = heap.delete("k4")
    assert deleted is not None and deleted.rank == 4
    assert heap.delete("k4") is None
    assert heap.get("k4") is None
    assert drain(heap) == [f"k{r}" for r in range(10) if r != 4]


operations = st.lists(
    st.tuples(
        st.sampled_from(["add", "delete", "pop"]),
        st.sampled_from("abcdefgh"),
        st.integers(min_value=0, max_value=20),
    ),
    max_size=60,
)


@given(operations)
def test_matches_a_sorted_model_under_any_sequence_of_operations(
    ops: list[tuple[str, str, int]],
) -> None:
    heap = new_heap()
    model: dict[str, int] = {}
    for op, key, rank in ops:
        if op == "add":
            heap.add_or_update(Item(key, rank))
            model[key] = rank
        elif op == "delete":
            assert (heap.delete(key) is not None) == (key in model)
            model.pop(key, None)
        else:
            popped = heap.pop()
            expected = min(model.items(), key=lambda kv: (kv[1], kv[0]), default=None)
            if expected is None:
                assert popped is None
            else:
                assert popped is not None and (popped.key, popped.rank) == expected
                del model[popped.key]
        assert len(heap) == len(model)
    assert drain(heap) == [k for k, _ in sorted(model.items(), key=lambda kv: (kv[1], kv[0]))]


def by_rank_alone(a: Item, b: Item) -> bool:
    return a.rank < b.rank


@given(operations)
def test_ranked_items_come_out_exactly_as_compared_ones_ties_included(
    ops: list[tuple[str, str, int]],
) -> None:
    # Ranks 0..3 only, and no tie-break by key: many items are equal, and the order among
    # them is whatever the heap's moves make of it, which ranking must not change.
    compared: KeyedHeap[Item] = KeyedHeap(lambda item: item.key, by_rank_alone)
    ranked: KeyedHeap[Item] = KeyedHeap(lambda item: item.key, by_rank_alone, lambda i: i.rank)
    for op, key, rank in ops:
        for heap in (compared, ranked):
            if op == "add":
                heap.add_or_update(Item(key, rank % 4))
            elif op == "delete":
                heap.delete(key)
        if op == "pop":
            left, right = compared.pop(), ranked.pop()
            assert (left and left.key) == (right and right.key)
    assert drain(compared) == drain(ranked)


def test_a_rank_that_raises_turns_ranking_off_and_less_orders_everything() -> None:
    def rank(item: Item) -> int:
        if item.key == "bad":
            raise RuntimeError("no rank for you")
        # Deliberately the reverse of `less`: items ranked before the fault come out in
        # `less`'s order all the same once ranking is off.
        return -item.rank

    heap: KeyedHeap[Item] = KeyedHeap(lambda item: item.key, by_rank, rank)
    for key, value in [("c", 3), ("a", 1), ("d", 4)]:
        heap.add_or_update(Item(key, value))
    heap.add_or_update(Item("bad", 2))
    heap.add_or_update(Item("e", 0))
    assert drain(heap) == ["e", "a", "bad", "c", "d"]


def test_ranks_that_cannot_be_compared_turn_ranking_off() -> None:
    ranks: dict[str, object] = {"a": 1, "b": "one", "c": 3}
    heap: KeyedHeap[Item] = KeyedHeap(lambda item: item.key, by_rank, lambda i: ranks[i.key])
    for key, value in [("c", 3), ("a", 1), ("b", 2)]:
        heap.add_or_update(Item(key, value))
    assert drain(heap) == ["a", "b", "c"]
