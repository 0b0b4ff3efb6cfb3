"""Gang-scheduling scenarios for the in-memory cluster: PodGroups, their pods, and a driver
that lets fake time pass while the scheduler works."""

from __future__ import annotations

from typing import Any

from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness

GROUP_LABEL = "scheduling.x-k8s.io/pod-group"

COSCHEDULING_CONFIG: dict[str, Any] = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
            },
        }
    ]
}


def pod_group(
    name: str,
    min_member: int,
    *,
    namespace: str = "default",
    min_resources: dict[str, str] | None = None,
    timeout: int | None = None,
    created: str = "2026-01-01T00:00:00Z",
) -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": min_member}
    if min_resources:
        spec["minResources"] = min_resources
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": created},
        "spec": spec,
    }


def gang_pods(group: str, count: int, cpu: str = "1") -> list[dict[str, Any]]:
    return [
        make_pod(f"{group}-{i}").label(GROUP_LABEL, group).req(cpu=cpu).dict() for i in range(count)
    ]


def nodes(count: int, cpu: str = "2") -> list[dict[str, Any]]:
    return [make_node(f"n{i}").capacity(cpu=cpu, pods="110").dict() for i in range(count)]


def bound_count(h: Harness, group: str) -> int:
    return sum(
        1
        for pod in h.sim.objects("pods")
        if (pod["metadata"].get("labels") or {}).get(GROUP_LABEL) == group
        and (pod.get("spec") or {}).get("nodeName")
    )


async def run_for(h: Harness, seconds: float, step: float = 1.0) -> None:
    """Schedule whatever is active, then let `step` seconds pass (timers, backoffs), repeatedly."""
    elapsed = 0.0
    while elapsed < seconds:
        await h.schedule_active()
        h.clock.advance(step)
        elapsed += step
        h.scheduler.queue.flush_backoff_completed()
        h.scheduler.queue.flush_unschedulable_leftover()
        await h.quiesce()
    await h.schedule_active()
