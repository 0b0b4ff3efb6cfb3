"""CapacityScheduling's preemption on a fixed table: who may preempt, and when not again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plugins.capacity_scheduling import CapacityScheduling
from plugins.node_resources_fit import NodeResourcesFit
from plugins.node_resources_fit import NodeResourcesFitArgs
from scheduler.framework import CycleState
from scheduler.framework import Pod
from scheduler.framework import PostFilterResult
from scheduler.framework import Status
from scheduler.runtime.node_filter import FilterChain
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.plugins.default_preemption_world import Statuses
from tests.plugins.default_preemption_world import terminating


def quota(namespace: str, min_cpu: str, max_cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": namespace, "namespace": namespace},
        "spec": {"min": {"cpu": min_cpu}, "max": {"cpu": max_cpu}},
    }


def running(name: str, namespace: str, *, priority: int = 0) -> Pod:
    return make_pod(name, namespace).node("n0").req(cpu="1").priority(priority).obj()


def pending(name: str, namespace: str, *, nominated: str = "") -> Pod:
    raw = make_pod(name, namespace).req(cpu="1").priority(100).dict()
    if nominated:
        raw["status"]["nominatedNodeName"] = nominated
    return Pod.from_dict(raw)


class Cluster:
    """One node, quotas of min 1 / max 2 CPUs for namespaces a and b, NodeResourcesFit as the
    Filter."""

    def __init__(self, pods: list[Pod], cpu: str = "2", nominated: Sequence[Pod] = ()) -> None:
        table = build_table([make_node("n0").capacity(cpu=cpu, pods="110").obj()], pods)
        self.handle = FakeHandle(
            table,
            listers={"elasticquotas": [quota("a", "1", "2"), quota("b", "1", "2")]},
            nominated={"n0": nominated},
        )
        fit = NodeResourcesFit(NodeResourcesFitArgs(), self.handle)
        self.plugin = CapacityScheduling(None, self.handle)
        self.handle.chain = FilterChain([fit, self.plugin], [fit])

    def _cycle(self, pod: Pod) -> tuple[CycleState, Statuses]:
        state = CycleState()
        for plugin in self.handle.chain.pre_filter:
            plugin.pre_filter(state, pod, self.handle.table)
        info = self.handle.table.node_infos[0]
        statuses = Statuses(
            {"n0": self.handle.run_filter_plugins_with_nominated_pods(state, pod, info)}
        )
        return state, statuses

    def post_filter(self, pod: Pod) -> tuple[PostFilterResult | None, Status]:
        state, statuses = self._cycle(pod)
        return self.plugin.post_filter(state, pod, statuses)

    def victims(self, pod: Pod) -> list[str]:
        state, statuses = self._cycle(pod)
        chosen = self.plugin.plan(state, pod, statuses).chosen
        assert chosen is not None
        return [p.name for p in chosen.victims.pods]

    def preemptions_started(self) -> list[str]:
        return sorted(n for n in self.handle.background_work if n.startswith("preemption:"))


def test_pods_nominated_in_a_namespace_within_its_min_hold_their_share_of_the_mins() -> None:
    """Whatever their priority: b's min is b's, so a may not borrow what b's nominated pod
    will take, while a pod of a's own that is less important does not go first."""
    waiting = make_pod("b-next", "b").req(cpu="1").priority(0).obj()
    cluster = Cluster([running("b-0", "b")], cpu="4", nominated=[waiting])
    _, status = cluster.plugin.pre_filter(CycleState(), pending("a-0", "a"), cluster.handle.table)
    assert status.message() == (
        "Pod a/a-0 is rejected in PreFilter because total ElasticQuota used is more than min"
    )
    own = make_pod("a-next", "a").req(cpu="1").priority(0).obj()
    cluster = Cluster([running("b-0", "b")], cpu="4", nominated=[own])
    _, status = cluster.plugin.pre_filter(CycleState(), pending("a-0", "a"), cluster.handle.table)
    assert status.is_success


def test_a_reclaim_is_not_repeated_while_its_victims_are_still_being_sent() -> None:
    cluster = Cluster([running("b-0", "b"), running("b-1", "b")])
    pod = pending("reclaimer", "a")
    result, status = cluster.post_filter(pod)
    assert status.is_success and result is not None and result.nominated_node_name == "n0"
    assert cluster.preemptions_started() == ["preemption:a/reclaimer"]
    # The next attempt comes before the background work sent anything.
    result, status = cluster.post_filter(pod)
    assert result is None
    assert status.message() == (
        "preemption: waiting for the preemption for this pod to be finished"
    )


def test_a_terminating_pod_the_preemptor_may_take_on_its_nominated_node_holds_it_back() -> None:
    victim = terminating(running("b-0", "b"))
    cluster = Cluster([victim, running("b-1", "b")])
    result, status = cluster.post_filter(pending("reclaimer", "a", nominated="n0"))
    assert result is None
    assert status.message() == (
        "preemption: not eligible due to a terminating pod on the nominated node."
    )
    assert cluster.preemptions_started() == []


def test_a_terminating_borrower_does_not_hold_back_a_pod_beyond_its_min() -> None:
    # With a-0 and the pod, a passes its min: it may take only its own less important pods,
    # so b-0 going frees nothing it may use, and it looks for victims again.
    pods = [
        terminating(running("b-0", "b")),
        running("b-1", "b"),
        running("a-0", "a", priority=200),
    ]
    cluster = Cluster(pods, cpu="3")
    result, status = cluster.post_filter(pending("reclaimer", "a", nominated="n0"))
    assert result is not None and result.nominated_node_name == ""  # no help anywhere
    assert status.message() == (
        "preemption: 0/1 nodes are available: "
        "1 No victims found on node n0 for preemptor pod reclaimer."
    )


def test_without_its_prefilter_state_the_pod_is_not_eligible() -> None:
    cluster = Cluster([running("b-0", "b"), running("b-1", "b")])
    statuses = Statuses({"n0": Status.unschedulable("Insufficient cpu")})
    result, status = cluster.plugin.post_filter(CycleState(), pending("reclaimer", "a"), statuses)
    assert result is None
    assert status.message() == "preemption: not eligible due to failed to read from cycleState"


def test_of_tied_pods_the_one_upstreams_sort_leaves_first_on_the_node_goes() -> None:
    # Unstarted pods of one priority: scheduler-plugins sorts the node's pods with
    # "not MoreImportantPod", which keeps them in node order (x, y); reprieved the other way
    # round, y stays and x goes.
    free = [make_pod(name, "free").node("n0").req(cpu="1").obj() for name in ("x", "y")]
    pod = make_pod("vip", "free").req(cpu="1").priority(100).obj()
    assert Cluster(free).victims(pod) == ["x"]
