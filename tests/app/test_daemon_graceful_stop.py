"""A graceful stop hands the Lease over before it waits for Events, within one budget."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.app.daemon_on_sim import DEADLINE_S
from tests.app.daemon_on_sim import OPTIONS
from tests.app.daemon_on_sim import RecordingCluster
from tests.app.daemon_on_sim import bound
from tests.app.daemon_on_sim import scheduling_daemon
from tests.app.daemon_on_sim import until

# Far longer than the test waits: a stop that spent it would fail the test.
LONG_BUDGET_S = 120.0


class EventsAfterReleaseCluster(RecordingCluster):
    """Holds every Event write until the Lease has been released, as an events endpoint
    that answers only after a standby took over would."""

    def __init__(self) -> None:
        super().__init__()
        self.released = asyncio.Event()
        self.events_written = 0

    async def update(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        answer = await super().update(resource, obj)
        if resource == "leases" and not obj["spec"].get("holderIdentity"):
            self.calls.append("release lease")
            self.released.set()
        return answer

    async def create_event(self, event: Mapping[str, Any]) -> None:
        await self.released.wait()
        self.events_written += 1
        await super().create_event(event)


async def test_the_lease_is_released_before_events_drain() -> None:
    cluster = EventsAfterReleaseCluster()
    cluster.load([make_node("n1").dict(), make_pod("p", "ns").scheduler("production").dict()])
    options = replace(OPTIONS, shutdown_timeout=LONG_BUDGET_S)
    daemon = scheduling_daemon("production", cluster, leader_elect=True, options=options)
    await daemon.start()
    await until(lambda: bound(cluster, "p"))
    # The pod's Scheduled Event waits for the release; a stop that drained Events first
    # would wait out its whole budget.
    await asyncio.wait_for(daemon.shutdown(), DEADLINE_S)
    assert cluster.calls[-1] == "release lease"
    # ...and nothing was lost for it: the Scheduled and LeaderElection Events were written.
    assert cluster.events_written >= 3
