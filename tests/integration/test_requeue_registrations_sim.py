"""Which cluster events bring a rejected pod back, and how the queue counts arrivals, on the
whole scheduler against the in-memory cluster."""

from __future__ import annotations

import copy
from typing import Any

from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.storage_builders import make_pvc
from scheduler.testing.storage_builders import make_storage_class
from tests.extender_server import ExtenderBehaviour
from tests.extender_server import extender_config
from tests.extender_server import running_extender
from tests.integration.harness import Harness

# Longer than any backoff of the default configuration (10 s).
PAST_ANY_BACKOFF_S = 11.0


def _node(name: str) -> dict[str, Any]:
    return make_node(name).capacity(cpu="4", memory="8Gi", pods="10").dict()


async def _retry_until_it_waits_in_the_pool(h: Harness, key: str) -> None:
    """Schedule the pod until a failure leaves it in the unschedulable pool.

    Its first failure writes its PodScheduled condition, and that update of the pod itself may
    move it to backoffQ (it does for every rejector registered for Pod updates, as upstream).
    A second, identical failure writes nothing, so the pod stays in the pool.
    """
    for _ in range(3):
        await h.schedule_active()
        if h.scheduler.queue.locate(key) == "unschedulable":
            return
        h.clock.advance(PAST_ANY_BACKOFF_S)
        h.scheduler.queue.flush_backoff_completed()
    raise AssertionError(f"{key} never stayed in the unschedulable pool")


async def test_a_pod_an_extender_rejected_is_retried_when_a_node_is_added() -> None:
    with running_extender(ExtenderBehaviour(reject={"n1", "n2", "n3"})) as extender:
        async with Harness({"extenders": [extender_config(extender.url)]}) as h:
            h.create([_node("n1"), _node("n2"), make_pod("p").dict()])
            await _retry_until_it_waits_in_the_pool(h, "default/p")
            # Only the extender rejected it: no plugin's registration can bring it back.
            info = h.scheduler.queue.get("default/p")
            assert info is not None and info.unschedulable_plugins == {"Extender"}

            h.create([_node("n3")])
            await h.quiesce()
            assert h.scheduler.queue.locate("default/p") in ("backoff", "active")


async def test_a_pod_node_affinity_rejected_is_retried_when_a_node_taint_changes() -> None:
    async with Harness() as h:
        h.create([_node("n1"), make_pod("p").node_selector(disk="ssd").dict()])
        await _retry_until_it_waits_in_the_pool(h, "default/p")
        info = h.scheduler.queue.get("default/p")
        assert info is not None and info.unschedulable_plugins == {"NodeAffinity"}

        [stored] = h.sim.objects("nodes")
        tainted = copy.deepcopy(stored)
        tainted["spec"]["taints"] = [{"key": "k", "value": "v", "effect": "NoSchedule"}]
        await h.sim.update("nodes", tainted)
        await h.quiesce()
        # NodeAffinity registers node additions and label changes only; like kube-scheduler we
        # also offer it taint changes, whose hint-less registration always says Queue.
        assert h.scheduler.queue.locate("default/p") in ("backoff", "active")


async def test_a_gated_pod_is_counted_as_arriving_in_the_unschedulable_queue() -> None:
    async with Harness() as h:
        h.create([make_pod("p").scheduling_gate("example.com/wait").dict()])
        await h.quiesce()
        registry = h.scheduler.metrics.registry

        def incoming(queue: str) -> float | None:
            return registry.get_sample_value(
                "scheduler_queue_incoming_pods_total",
                {"queue": queue, "event": "UnschedulablePodAdd"},
            )

        assert (incoming("unschedulable"), incoming("gated")) == (1, None)
        # The pending-pods gauge still tells gated pods apart.
        assert registry.get_sample_value("scheduler_pending_pods", {"queue": "gated"}) == 1
        assert registry.get_sample_value("scheduler_pending_pods", {"queue": "unschedulable"}) == 0


async def test_a_pod_another_pods_anti_affinity_repels_is_retried_when_relabelled() -> None:
    repelling = (
        make_pod("guard")
        .node("n1")
        .phase("Running")
        .pod_affinity("required", "kubernetes.io/hostname", {"app": "web"}, anti=True)
        .dict()
    )
    async with Harness() as h:
        h.create([_node("n1"), repelling, make_pod("p").label("app", "web").dict()])
        await _retry_until_it_waits_in_the_pool(h, "default/p")
        info = h.scheduler.queue.get("default/p")
        assert info is not None and info.unschedulable_plugins == {"InterPodAffinity"}

        relabelled = copy.deepcopy(h.pod("default", "p"))
        relabelled["metadata"]["labels"] = {"app": "api"}
        await h.sim.update("pods", relabelled)
        await h.quiesce()
        # Its own new labels may get past the guard's anti-affinity: upstream requeues it.
        assert h.scheduler.queue.locate("default/p") in ("backoff", "active")


async def test_events_of_grouped_kinds_are_counted_under_upstreams_labels() -> None:
    """kube-scheduler spells the kinds of the storage and resource API groups with their group
    in event labels ("storage.k8s.io/StorageClassAdd"); dashboards select on them."""
    pod = make_pod("p").dict()
    pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    claim = make_pvc("data").storage_class("fast").request("1Gi").dict()
    async with Harness() as h:
        h.create([_node("n1"), claim, pod])
        await _retry_until_it_waits_in_the_pool(h, "default/p")
        info = h.scheduler.queue.get("default/p")
        assert info is not None and info.unschedulable_plugins == {"VolumeBinding"}

        h.create([make_storage_class("fast").wait_for_first_consumer().dict()])
        await h.quiesce()
        assert h.scheduler.queue.locate("default/p") in ("backoff", "active")
        registry = h.scheduler.metrics.registry
        moved = sum(
            registry.get_sample_value(
                "scheduler_queue_incoming_pods_total",
                {"queue": queue, "event": "storage.k8s.io/StorageClassAdd"},
            )
            or 0
            for queue in ("active", "backoff")
        )
        assert moved == 1
        assert (
            registry.get_sample_value(
                "scheduler_queue_incoming_pods_total",
                {"queue": "backoff", "event": "StorageClassAdd"},
            )
            is None
        )
