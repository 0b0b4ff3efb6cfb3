"""TableMemo: a value is rebuilt only for a new question, a new validity key or another table."""

from __future__ import annotations

from plugins.helpers.table_memo import TableMemo
from scheduler.testing import build_table
from scheduler.testing import make_node


class Builds:
    """A build function that counts its calls and returns a fresh list each time."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> list[int]:
        self.count += 1
        return [self.count]


def test_a_value_is_kept_while_its_validity_key_holds() -> None:
    table = build_table([make_node("n1").obj()])
    memo: TableMemo[list[int]] = TableMemo()
    build = Builds()
    first = memo.get(table, "q", (1, 1), build)
    assert memo.get(table, "q", (1, 1), build) is first
    assert build.count == 1
    assert memo.get(table, "q", (2, 1), build) == [2]
    assert memo.get(table, "other", (2, 1), build) == [3]
    assert memo.get(table, "q", (2, 1), build) == [2]
    assert build.count == 3


def test_another_table_forgets_every_value() -> None:
    one = build_table([make_node("n1").obj()])
    two = build_table([make_node("n1").obj()])
    memo: TableMemo[list[int]] = TableMemo()
    build = Builds()
    memo.get(one, "q", 0, build)
    memo.get(two, "q", 0, build)
    assert build.count == 2
    memo.get(one, "q", 0, build)
    assert build.count == 3


def test_passing_the_limit_forgets_everything_remembered() -> None:
    table = build_table([make_node("n1").obj()])
    memo: TableMemo[list[int]] = TableMemo(limit=2)
    build = Builds()
    memo.get(table, "a", 0, build)
    memo.get(table, "b", 0, build)
    memo.get(table, "a", 0, build)
    assert build.count == 2
    memo.get(table, "c", 0, build)  # a third question: "a" and "b" are dropped
    memo.get(table, "c", 0, build)
    assert build.count == 3
    memo.get(table, "a", 0, build)
    assert build.count == 4
