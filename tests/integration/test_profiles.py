"""Several profiles in one scheduler: each pod is scheduled by the profile it names."""

from __future__ import annotations

import yaml

from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.data import MULTI_PROFILE
from tests.integration.harness import Harness

SEED_CONFIG = yaml.safe_load(MULTI_PROFILE)


def _cluster() -> list[dict[str, object]]:
    nodes = [make_node(f"plain-{i}").dict() for i in range(6)]
    nodes += [make_node(f"foo-{i}").label("scheduler-profile", "foo").dict() for i in range(2)]
    return nodes


async def test_seed_config_weights_interpod_affinity_zero_as_one() -> None:
    async with Harness(SEED_CONFIG) as h:
        foo = h.scheduler.profiles["foo-scheduler"]
        weights = {entry.plugin.name: entry.weight for entry in foo.score}
        assert weights["InterPodAffinity"] == 1


async def test_each_profile_places_its_own_pods() -> None:
    async with Harness(SEED_CONFIG) as h:
        pods = [
            make_pod(f"foo-{i}").scheduler("foo-scheduler").req(cpu="100m").dict()
            for i in range(12)
        ]
        pods += [make_pod(f"any-{i}").req(cpu="100m").dict() for i in range(24)]
        pods.append(make_pod("stranger").scheduler("other-scheduler").dict())
        h.create([*_cluster(), *pods])
        await h.schedule_active()

        foo_nodes = {h.node_of("default", f"foo-{i}") for i in range(12)}
        assert foo_nodes <= {"foo-0", "foo-1"}
        any_nodes = {h.node_of("default", f"any-{i}") for i in range(24)}
        assert None not in any_nodes
        # Spreading by LeastAllocated puts default-scheduler pods on plain nodes as well.
        assert any(n.startswith("plain-") for n in any_nodes if n)
        # A pod naming a scheduler no profile has is never touched: not bound, no events.
        stranger = h.pod("default", "stranger")
        assert not stranger["spec"].get("nodeName")
        assert "conditions" not in stranger.get("status", {})
        assert h.sim.events("default/stranger") == []
        assert h.scheduler.queue.locate("default/stranger") == ""


async def test_foo_pods_without_matching_nodes_get_the_enforced_affinity_reason() -> None:
    async with Harness(SEED_CONFIG) as h:
        h.create(
            [
                *(make_node(f"plain-{i}").dict() for i in range(3)),
                make_pod("lonely").scheduler("foo-scheduler").dict(),
            ]
        )
        await h.schedule_active()
        assert h.node_of("default", "lonely") is None
        assert h.event_notes("default", "lonely", "FailedScheduling") == [
            "0/3 nodes are available: 3 node(s) didn't match scheduler-enforced node affinity. "
            "no new claims to deallocate, "
            "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        ]
