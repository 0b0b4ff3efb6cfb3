"""`scheduler_event_handling_duration_seconds` is observed under the labels kube-scheduler's
event handlers use: a binding is an assigned pod's arrival and an unscheduled pod's departure,
an update is timed whole and once per kind of change, and other watched kinds are timed too."""

from __future__ import annotations

import copy
from typing import Any

from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.storage_builders import make_storage_class
from tests.integration.harness import Harness

METRIC = "scheduler_event_handling_duration_seconds_count"


def handled(h: Harness, event: str) -> float:
    value = h.scheduler.metrics.registry.get_sample_value(METRIC, {"event": event})
    return value or 0.0


async def update_pod(h: Harness, name: str, change: dict[str, Any]) -> None:
    pod = copy.deepcopy(h.pod("default", name))
    for section, fields in change.items():
        pod.setdefault(section, {}).update(fields)
    await h.sim.update("pods", pod)
    await h.quiesce()


async def test_a_binding_is_an_assigned_pod_added_and_an_unscheduled_pod_deleted() -> None:
    async with Harness() as h:
        h.create([make_node("n1").dict(), make_pod("p").dict()])
        await h.schedule_active()
        assert h.node_of("default", "p") == "n1"
        assert handled(h, "UnschedulablePodAdd") == 1
        assert handled(h, "AssignedPodAdd") == 1
        assert handled(h, "UnschedulablePodDelete") == 1
        assert handled(h, "AssignedPodUpdate") == 0


async def test_an_assigned_pods_update_is_timed_whole_and_per_change() -> None:
    async with Harness() as h:
        h.create([make_node("n1").dict(), make_pod("p").node("n1").phase("Running").dict()])
        await h.quiesce()
        await update_pod(h, "p", {"metadata": {"labels": {"app": "web"}}})
        assert handled(h, "AssignedPodUpdate") == 1
        assert handled(h, "AssignedPodUpdatePodLabel") == 1


async def test_a_pod_that_finished_is_an_assigned_pod_deleted() -> None:
    async with Harness() as h:
        h.create([make_node("n1").dict(), make_pod("p").node("n1").phase("Running").dict()])
        await h.quiesce()
        await update_pod(h, "p", {"status": {"phase": "Succeeded"}})
        assert handled(h, "AssignedPodDelete") == 1
        assert handled(h, "AssignedPodUpdate") == 0


async def test_an_unscheduled_pods_update_is_timed_whole_and_per_change() -> None:
    async with Harness() as h:
        h.create([make_pod("p").dict()])  # no node: it stays pending
        await h.schedule_active()
        await update_pod(h, "p", {"metadata": {"labels": {"app": "web"}}})
        assert handled(h, "UnschedulablePodUpdate") >= 1
        assert handled(h, "UnschedulablePodUpdatePodLabel") == 1


async def test_other_watched_kinds_are_timed_under_their_event_label() -> None:
    async with Harness() as h:
        h.create([make_storage_class("fast").dict()])
        await h.quiesce()
        assert handled(h, "storage.k8s.io/StorageClassAdd") == 1


async def test_actions_no_plugin_registered_are_not_handled_so_not_timed() -> None:
    """As kube-scheduler, which installs handlers only for registered actions: VolumeBinding
    asks for StorageClasses added or updated, not deleted; no default plugin asks about
    Namespaces, which InterPodAffinity's informer still lists."""
    async with Harness() as h:
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}
        h.create([make_storage_class("fast").dict(), namespace])
        await h.quiesce()
        await h.sim.delete("storageclasses", "", "fast")
        await h.quiesce()
        assert handled(h, "storage.k8s.io/StorageClassAdd") == 1
        assert handled(h, "storage.k8s.io/StorageClassDelete") == 0
        assert handled(h, "NamespaceAdd") == 0
