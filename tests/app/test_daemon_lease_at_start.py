"""A replica that takes the Lease as it starts lists the pods once; a standby lists them again
when it takes over, so its cache holds what the previous leader bound."""

from __future__ import annotations

from scheduler.cluster.port import ObjectList
from scheduler.cluster.sim import SimCluster
from scheduler.framework.errors import APIError
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.app.daemon_on_sim import RecordingCluster
from tests.app.daemon_on_sim import bound
from tests.app.daemon_on_sim import cluster_with_a_pending_pod
from tests.app.daemon_on_sim import scheduling_daemon
from tests.app.daemon_on_sim import until

LEASE_NAMESPACE = "kube-system"


async def test_a_replica_that_leads_from_the_start_lists_the_pods_once() -> None:
    cluster = cluster_with_a_pending_pod()
    daemon = scheduling_daemon("production", cluster, leader_elect=True)
    await daemon.start()
    try:
        await until(lambda: bound(cluster, "p"))
    finally:
        await daemon.shutdown()
    assert cluster.calls == ["take lease", "list pods"]


async def test_a_standby_lists_the_pods_again_when_it_takes_over() -> None:
    cluster = cluster_with_a_pending_pod()
    leader = scheduling_daemon("production", cluster, leader_elect=True)
    await leader.start()
    await until(lambda: bound(cluster, "p"))
    standby = scheduling_daemon("production", cluster, leader_elect=True)
    await standby.start()
    try:
        await until(standby._informers_synced)
        assert cluster.calls == ["take lease", "list pods", "list pods"]
        await leader.shutdown()  # releases the Lease
        await until(lambda: cluster.calls[-1] == "list pods" and len(cluster.calls) == 5)
    finally:
        await standby.shutdown()
    assert cluster.calls == ["take lease", "list pods", "list pods", "take lease", "list pods"]


def leadership_notes(cluster: SimCluster) -> list[str]:
    return [
        e["note"]
        for e in cluster.objects("events")
        if e["reason"] == "LeaderElection"
        and e["regarding"]["kind"] == "Lease"
        and e["regarding"]["name"] == "kube-scheduler"
        and e["metadata"]["namespace"] == LEASE_NAMESPACE
    ]


async def test_each_change_of_leader_is_an_event_on_the_lease() -> None:
    cluster = SharedCluster()
    cluster.load([make_node("n1").dict()])
    leader = scheduling_daemon("production", cluster, leader_elect=True)
    await leader.start()
    standby = scheduling_daemon("production", cluster, leader_elect=True)
    await standby.start()
    try:
        await until(lambda: len(leadership_notes(cluster)) == 1)
        await leader.shutdown()  # releases the Lease
        await until(lambda: len(leadership_notes(cluster)) == 3)
    finally:
        await standby.shutdown()
    assert leadership_notes(cluster) == [
        f"{leader.identity} became leader",
        f"{leader.identity} stopped leading",
        f"{standby.identity} became leader",
        f"{standby.identity} stopped leading",  # at its own shutdown
    ]
    [event] = [e for e in cluster.objects("events") if e["note"].endswith("became leader")][:1]
    assert event["reportingController"] == "production"


class SharedCluster(RecordingCluster):
    """One cluster behind two daemons: the first to shut down must not close it for the other."""

    async def close(self) -> None:
        return None


async def test_with_delayed_caches_a_standby_lists_nothing_until_it_takes_over() -> None:
    cluster = SharedCluster()
    cluster.load([make_node("n1").dict(), make_pod("p", "ns").scheduler("production").dict()])
    leader = scheduling_daemon("production", cluster, leader_elect=True, delay_caches=True)
    await leader.start()
    await until(lambda: bound(cluster, "p"))
    standby = scheduling_daemon("production", cluster, leader_elect=True, delay_caches=True)
    await standby.start()
    try:
        # It competes for the Lease all along, without a cache.
        assert standby.campaigning
        assert not standby._informers_synced()
        assert cluster.calls == ["take lease", "list pods"]
        await leader.shutdown()  # releases the Lease
        await until(lambda: standby.is_leader)
        await cluster.create("pods", make_pod("q", "ns").scheduler("production").dict())
        await until(lambda: bound(cluster, "q"))
    finally:
        await standby.shutdown()
    assert cluster.calls == ["take lease", "list pods", "take lease", "list pods"]


class ForbiddingCluster(RecordingCluster):
    """Refuses to list one resource (as the API server does for a role that lacks it) until
    told to stop."""

    def __init__(self, forbidden: str) -> None:
        super().__init__()
        self.forbidden: str | None = forbidden
        self.refusals = 0

    async def list(
        self, resource: str, *, namespace: str | None = None, field_selector: str | None = None
    ) -> ObjectList:
        if resource == self.forbidden:
            self.refusals += 1
            raise APIError(403, f'{resource}.storage.k8s.io is forbidden: cannot list "{resource}"')
        return await super().list(resource, namespace=namespace, field_selector=field_selector)


async def test_a_replica_that_cannot_list_does_not_compete_for_the_lease() -> None:
    cluster = ForbiddingCluster("volumeattachments")
    leader = scheduling_daemon("production", cluster, leader_elect=True)
    await leader.start()  # takes the Lease at once
    standby = scheduling_daemon("production", cluster, leader_elect=True)
    await standby.start()
    try:
        await until(lambda: cluster.refusals >= 2)
        assert leader.campaigning and not standby.campaigning
        cluster.forbidden = None
        await until(lambda: standby.campaigning)
        assert standby._informers_synced()
    finally:
        await standby.shutdown()
        await leader.shutdown()
