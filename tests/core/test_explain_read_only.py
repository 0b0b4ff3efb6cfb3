"""`explain` cannot write: the client refuses, and work plugins start is cancelled unrun."""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any
from typing import ClassVar

import pytest

from scheduler.app.configuration import plugin_registry
from scheduler.app.scenario import ordered_for_loading
from scheduler.app.scenario import parse_documents
from scheduler.cluster.read_only import ReadOnlyCluster
from scheduler.cluster.read_only import WriteRefusedError
from scheduler.cluster.sim import SimCluster
from scheduler.config import load_config_dict
from scheduler.core.explain.session import explain_in
from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import NodeStatusReader
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.framework.plugins import PostFilterResult
from scheduler.objects.pod import Pod as PodView
from scheduler.testing import FakeClock
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.test_capacity_scheduling_sim import CONFIG as CAPACITY_SCHEDULING

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: tiny}
status: {allocatable: {cpu: 100m, memory: 1Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: victim, namespace: default}
spec: {nodeName: tiny, containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: default}
spec:
  containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
"""


def _sim() -> SimCluster:
    sim = SimCluster(clock=FakeClock())
    sim.load(ordered_for_loading(parse_documents(CLUSTER, "cluster").objects))
    return sim


async def test_reads_pass_and_every_write_is_refused() -> None:
    sim = _sim()
    client = ReadOnlyCluster(sim, "explain is read-only")
    assert len((await client.list("nodes")).items) == 1
    assert (await client.get("pods", "default", "big"))["metadata"]["name"] == "big"
    pod = PodView.from_dict(make_pod("big", "default").dict())
    node = make_node("n").dict()
    writes: list[Callable[[], Awaitable[Any]]] = [
        lambda: client.create("nodes", node),
        lambda: client.update("nodes", node),
        lambda: client.delete("pods", "default", "victim"),
        lambda: client.create_event({}),
        lambda: client.bind(pod, "tiny"),
        lambda: client.delete_pod("default", "victim"),
        lambda: client.patch_pod_status("default", "big", {"phase": "Running"}),
        lambda: client.patch_object("pods", "default", "big", {"metadata": {}}),
    ]
    revision = sim.revision
    for write in writes:
        with pytest.raises(WriteRefusedError, match="explain is read-only"):
            await write()
    assert sim.revision == revision
    assert len(client.refused) == len(writes)


class Evictor:
    """A PostFilter plugin that cannot plan: it evicts in the background whenever it runs."""

    name = "Evictor"
    ran: ClassVar[list[str]] = []

    def __init__(self, args: object, handle: Handle) -> None:
        self.handle = handle

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        async def evict() -> None:
            Evictor.ran.append("evicted")
            await self.handle.api.delete_pod("default", "victim")

        self.handle.start_background("evict:default/victim", evict)
        return None, Status.unschedulable("evicting default/victim")


async def test_background_work_of_postfilter_is_cancelled_before_it_runs() -> None:
    registry = dict(plugin_registry([]))
    registry["Evictor"] = PluginSpec("Evictor", Evictor)
    config, profiles = load_config_dict(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {"postFilter": {"enabled": [{"name": "Evictor"}]}},
                }
            ],
        },
        registry,
    )
    sim = _sim()
    revision = sim.revision
    explanation = await explain_in(sim, "default", "big", config, profiles, registry)
    assert explanation.cancelled_actions == ["plugin:default-scheduler:evict:default/victim"]
    assert Evictor.ran == []
    assert sim.revision == revision
    report = next(r for r in explanation.post_filter if r.plugin == "Evictor")
    assert not report.dry_run and report.message == "evicting default/victim"
    assert "evicting default/victim" in explanation.message


QUOTA_CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: only}
status: {allocatable: {cpu: "2", memory: 1Gi, pods: "110"}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: a, namespace: a}
spec: {min: {cpu: "1"}, max: {cpu: "2"}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: b, namespace: b}
spec: {min: {cpu: "1"}, max: {cpu: "2"}}
---
apiVersion: v1
kind: Pod
metadata: {name: borrower-0, namespace: b}
spec:
  nodeName: only
  containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: borrower-1, namespace: b}
spec:
  nodeName: only
  containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: reclaimer, namespace: a}
spec:
  priority: 10
  containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
"""


async def test_quota_preemption_is_planned_with_its_victims_and_never_carried_out() -> None:
    registry = dict(plugin_registry([]))
    versioned = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        **CAPACITY_SCHEDULING,
    }
    config, profiles = load_config_dict(versioned, registry)
    sim = SimCluster(clock=FakeClock())
    sim.load(ordered_for_loading(parse_documents(QUOTA_CLUSTER, "cluster").objects))
    revision = sim.revision
    explanation = await explain_in(sim, "a", "reclaimer", config, profiles, registry)
    report = next(r for r in explanation.post_filter if r.plugin == "CapacityScheduling")
    assert report.dry_run and report.nominated_node == "only"
    # a is within its min of 1 with the pod, so b's pods above b's min are the candidates;
    # taking one of them brings b back to its min and makes room.
    [candidate] = report.candidates
    assert candidate.node == "only" and len(candidate.victims) == 1
    assert candidate.victims[0].pod.startswith("b/borrower-")
    # Nothing was left to cancel: no preemption began, and the quota status writer runs only
    # on a replica that schedules, which `explain` never is.
    assert explanation.cancelled_actions == []
    assert sim.revision == revision
