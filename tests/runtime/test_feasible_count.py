"""How many feasible nodes the Filter pass looks for (upstream's numFeasibleNodesToFind)."""

from __future__ import annotations

import pytest

from scheduler.runtime.filtering import num_feasible_nodes_to_find


@pytest.mark.parametrize(
    ("total", "percentage", "vectorized", "expected"),
    [
        (50, None, False, 50),  # fewer than 100 nodes: all of them
        (500, None, False, 230),  # adaptive 50 - 500/125 = 46 %
        (1000, None, False, 420),
        (5000, None, False, 500),  # 10 %
        (6000, None, False, 300),  # floored at 5 %
        (1500, 1, False, 100),  # never fewer than 100
        (5000, 100, False, 5000),
        (5000, 30, True, 1500),  # an explicit percentage applies even when vectorized
        (5000, None, True, 5000),  # unset and vectorized: every node
        (5000, 0, True, 5000),
    ],
)
def test_num_feasible_nodes(
    total: int, percentage: int | None, vectorized: bool, expected: int
) -> None:
    assert (
        num_feasible_nodes_to_find(total, percentage, has_scoring=True, vectorized=vectorized)
        == expected
    )


def test_without_scoring_one_feasible_node_is_enough() -> None:
    assert num_feasible_nodes_to_find(5000, None, has_scoring=False, vectorized=True) == 1
