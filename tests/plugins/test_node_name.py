"""NodeName: a pod with spec.nodeName fits only that node."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from plugins.node_name import REASON
from plugins.node_name import SPEC
from plugins.node_name import NodeName
from scheduler.framework import ActionType
from scheduler.framework import BatchFilterPlugin
from scheduler.framework import ClusterEvent
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import FilterPlugin
from scheduler.framework import Status
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node

PLUGIN = NodeName(None, FakeHandle())
REJECTED = Status.unresolvable(REASON)


def test_spec_and_events() -> None:
    assert SPEC.name == NodeName.name == "NodeName"
    assert isinstance(PLUGIN, FilterPlugin)
    assert isinstance(PLUGIN, BatchFilterPlugin)
    (registration,) = PLUGIN.events_to_register()
    assert registration.event == ClusterEvent(EventResource.NODE, ActionType.ADD)
    assert registration.hint is None


@pytest.mark.parametrize(
    ("node_name", "expected"),
    [
        ("", [Status(), Status(), Status()]),
        ("b", [REJECTED, Status(), REJECTED]),
        ("elsewhere", [REJECTED, REJECTED, REJECTED]),
    ],
    ids=["unset", "named", "unknown-node"],
)
def test_filter(node_name: str, expected: list[Status]) -> None:
    table = build_table([make_node(n).obj() for n in "abc"])
    pod = make_pod("p").spec(nodeName=node_name).obj()
    assert filter_each_node(PLUGIN, CycleState(), pod, table) == expected
    assert filter_batch_as_statuses(PLUGIN, CycleState(), pod, table) == expected


@settings(max_examples=60, deadline=None)
@given(
    count=st.integers(min_value=1, max_value=8),
    wanted=st.sampled_from(["", "n0", "n3", "n7", "gone"]),
    data=st.data(),
)
def test_batch_and_per_node_forms_agree(count: int, wanted: str, data: st.DataObject) -> None:
    table = build_table(make_node(f"n{i}").obj() for i in range(count))
    pod = make_pod("p").spec(nodeName=wanted).obj()
    per_node = filter_each_node(PLUGIN, CycleState(), pod, table)
    assert filter_batch_as_statuses(PLUGIN, CycleState(), pod, table) == per_node
    rows = np.asarray(data.draw(st.permutations(range(count))), dtype=np.int64)
    subset = filter_batch_as_statuses(PLUGIN, CycleState(), pod, table, rows)
    assert subset == [per_node[int(r)] for r in rows]
