"""The node table's log of stamped rows names the rows a pass over `pod_stamp` would find."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from scheduler.framework.node_info import NodeInfo
from scheduler.framework.node_table import NodeTable
from scheduler.testing import make_node
from scheduler.testing import make_pod

NODES = [f"n{i}" for i in range(5)]

operation = st.one_of(
    st.tuples(st.just("upsert"), st.sampled_from(NODES)),
    st.tuples(st.just("remove"), st.sampled_from(NODES)),
    st.tuples(st.just("add-pod"), st.sampled_from(NODES)),
    st.tuples(st.just("look"), st.just("")),
)


def _scanned(table: NodeTable, clock: int) -> list[int]:
    found: list[int] = np.flatnonzero(table.pod_stamp[: table.size] > clock).tolist()
    return found


@settings(max_examples=200, deadline=None)
@given(st.lists(operation, min_size=1, max_size=60))
def test_stamped_rows_since_any_clock_match_a_scan(operations: list[tuple[str, str]]) -> None:
    table = NodeTable(capacity=2)
    infos: dict[str, NodeInfo] = {}
    seen: list[int] = [0]
    for serial, (kind, name) in enumerate(operations):
        if kind == "upsert":
            info = infos.setdefault(name, NodeInfo())
            info.node = make_node(name).capacity(cpu="4", pods="10").obj()
            table.upsert_node(info)
        elif kind == "remove" and name in infos:
            table.remove_node(name)
            del infos[name]
        elif kind == "add-pod" and name in infos:
            infos[name].add_pod(make_pod(f"p{serial}").node(name).req(cpu="100m").obj())
            table.refresh_usage(infos[name])
        elif kind == "look":
            seen.append(table.pod_clock)
        for clock in seen:
            assert table.rows_stamped_since(clock) == _scanned(table, clock)


def test_a_clock_older_than_the_log_asks_for_a_scan() -> None:
    table = NodeTable()
    info = NodeInfo(make_node("n0").capacity(cpu="4", pods="10").obj())
    table.upsert_node(info)
    for _ in range(10_000):
        table.refresh_usage(info)
    assert table.rows_stamped_since(0) is None
    assert table.rows_stamped_since(table.pod_clock - 1) == [0]
    assert table.rows_stamped_since(table.pod_clock) == []
