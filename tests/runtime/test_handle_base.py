"""The half of the plugin Handle every Handle shares: fixed facts and runs of the Filter
chain on a hypothetical node."""

from __future__ import annotations

import random
from collections.abc import Sequence

from scheduler.framework import CycleState
from scheduler.framework import NodeInfo
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.framework.plugins import PreFilterExtensions
from scheduler.observability import SchedulerMetrics
from scheduler.runtime.handle_base import HandleBase
from scheduler.runtime.node_filter import FilterChain
from scheduler.testing import FakeClock
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import RecordingAPI


class _AtMostOnePod:
    """Filter: a node takes one pod at most. Its PreFilter extensions log what they are told."""

    name = "AtMostOnePod"

    def __init__(self) -> None:
        self.told: list[str] = []

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if node_info.pods:
            return Status.unschedulable("node is taken")
        return Status()

    def pre_filter(self, state: CycleState, pod: Pod, table: object) -> object:
        raise AssertionError("not run through the handle")

    def pre_filter_extensions(self) -> PreFilterExtensions:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        self.told.append(f"add {pod_to_add.key}")
        return Status()

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        self.told.append(f"remove {pod_to_remove.key}")
        return Status()


class _Handle(HandleBase):
    def __init__(self, chain: FilterChain, nominated: Sequence[Pod]) -> None:
        super().__init__(
            profile_name="p",
            clock=FakeClock(),
            rng=random.Random(1),
            parallelism=4,
            api=RecordingAPI(),
            plugin_metrics=SchedulerMetrics(),
        )
        self.chain = chain
        self.nominated = nominated

    def _filter_chain(self) -> FilterChain:
        return self.chain

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return self.nominated


def _handle(nominated: Sequence[Pod] = ()) -> tuple[_Handle, _AtMostOnePod]:
    plugin = _AtMostOnePod()
    chain = FilterChain(pre_filter=[plugin], filter=[plugin])  # type: ignore[list-item]
    return _Handle(chain, nominated), plugin


def test_fixed_facts_are_what_the_handle_was_built_with() -> None:
    handle, _ = _handle()
    assert (handle.profile_name, handle.parallelism) == ("p", 4)
    assert handle.rng.random() == random.Random(1).random()
    assert isinstance(handle.api, RecordingAPI)


def test_filter_run_counts_pods_nominated_to_the_node() -> None:
    node = NodeInfo(make_node("n").obj())
    pod = make_pod("incoming").priority(10).obj()
    free, _ = _handle()
    assert free.run_filter_plugins_with_nominated_pods(CycleState(), pod, node).is_success
    waiting = make_pod("nominated").uid("other").priority(10).obj()
    crowded, plugin = _handle([waiting])
    status = crowded.run_filter_plugins_with_nominated_pods(CycleState(), pod, node)
    assert status == Status.unschedulable("node is taken").with_plugin("AtMostOnePod")
    assert plugin.told == ["add default/nominated"]
    assert not node.pods  # the nominated pod went onto a copy of the node only


def test_pre_filter_extensions_hear_of_hypothetical_pods() -> None:
    handle, plugin = _handle()
    node = NodeInfo(make_node("n").obj())
    pod, other = make_pod("a").obj(), make_pod("b").obj()
    assert handle.run_pre_filter_extension_add_pod(CycleState(), pod, other, node).is_success
    assert handle.run_pre_filter_extension_remove_pod(CycleState(), pod, other, node).is_success
    assert plugin.told == ["add default/b", "remove default/b"]
