"""DemoPlugin tested with the scheduler's test kit, as the scheduler calls it."""

from __future__ import annotations

from kube_pyscheduler_demo import SPEC
from kube_pyscheduler_demo import DemoPlugin

from scheduler.framework import CycleState
from scheduler.framework import NodeTable
from scheduler.framework.contract import contract_problems
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import filter_each_node
from scheduler.testing.plugin_harness import score_each_node


def _table() -> NodeTable:
    return build_table([make_node("ok").label("demo-ok", "true").obj(), make_node("plain").obj()])


def test_keeps_the_contract() -> None:
    for point in SPEC.extension_points:
        assert contract_problems(DemoPlugin, point) == []


def test_only_demo_ok_nodes_pass() -> None:
    table = _table()
    plugin = DemoPlugin(None, FakeHandle(table))
    statuses = filter_each_node(plugin, CycleState(), make_pod("p").obj(), table)
    assert [s.is_success for s in statuses] == [True, False]
    assert statuses[1].message() == "node not demo-ok"


def test_every_node_scores_fifty() -> None:
    table = _table()
    plugin = DemoPlugin(None, FakeHandle(table))
    assert score_each_node(plugin, CycleState(), make_pod("p").obj(), table) == [50, 50]
