"""The plugins' leader work runs from the moment the scheduler starts to schedule with synced
caches, through the real scheduling loop, with no pod pending at all; and ends with it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import asynccontextmanager
from typing import Any

from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.gangs import GROUP_LABEL
from tests.integration.gangs import pod_group
from tests.integration.harness import Harness

CONFIG: dict[str, Any] = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {
                    "enabled": [{"name": "Coscheduling"}, {"name": "CapacityScheduling"}]
                },
                "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
                "postFilter": {
                    "enabled": [{"name": "CapacityScheduling"}],
                    "disabled": [{"name": "*"}],
                },
            },
        }
    ]
}
QUOTA = {
    "apiVersion": "scheduling.x-k8s.io/v1alpha1",
    "kind": "ElasticQuota",
    "metadata": {"name": "q", "namespace": "team"},
    "spec": {"min": {"cpu": "4"}, "max": {"cpu": "8"}},
}
LEADER_TASKS = {
    "plugin:default-scheduler:podgroup-status",
    "plugin:default-scheduler:elasticquota-status",
}


def _running(name: str, namespace: str = "default", group: str = "") -> dict[str, Any]:
    builder = make_pod(name, namespace).req(cpu="1").node("n0").phase("Running")
    return (builder.label(GROUP_LABEL, group) if group else builder).dict()


@asynccontextmanager
async def _scheduling(objects: Sequence[Mapping[str, Any]]) -> AsyncIterator[Harness]:
    """The cluster holds `objects` (no pod pending); the scheduler starts and schedules
    through its own loop, as the daemon's leader does."""
    h = Harness(CONFIG)
    h.create(objects)
    await h.scheduler.start()
    h.scheduler.start_scheduling()
    try:
        yield h
    finally:
        await h.scheduler.stop()


def _status(h: Harness, resource: str, name: str) -> dict[str, Any]:
    found = next(o for o in h.sim.objects(resource) if o["metadata"]["name"] == name)
    return dict(found.get("status") or {})


def _leader_tasks(h: Harness) -> set[str]:
    return {task.get_name() for task in h.scheduler.background} & LEADER_TASKS


async def test_status_is_written_with_no_pod_pending() -> None:
    objects = [
        make_node("n0").capacity(cpu="8", pods="110").dict(),
        pod_group("done", 2),
        *(_running(f"done-{i}", group="done") for i in range(2)),
        pod_group("new", 2),
        QUOTA,
        _running("worker", "team"),
    ]
    async with _scheduling(objects) as h:
        await h.settle_until(lambda: _status(h, "elasticquotas", "q").get("used") == {"cpu": "1"})
        await h.settle_until(lambda: _status(h, "podgroups", "done").get("phase") == "Running")
        assert _status(h, "podgroups", "done")["running"] == 2
        assert _status(h, "podgroups", "new") == {"phase": "Pending", "running": 0}
        assert h.scheduler.queue.pending_counts().get("active", 0) == 0


async def test_the_leader_work_ends_when_the_replica_stops_scheduling() -> None:
    async with _scheduling([make_node("n0").dict(), QUOTA]) as h:
        await h.settle_until(lambda: _leader_tasks(h) == LEADER_TASKS)
        h.scheduler.cancel_scheduling()
        await h.settle_until(lambda: not _leader_tasks(h))
