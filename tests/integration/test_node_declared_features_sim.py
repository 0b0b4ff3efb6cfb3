"""NodeDeclaredFeatures in the default profile, on the in-memory cluster: placement on the
nodes that declare what the pod needs, upstream's words when none does, and the pod's return
once a node declares the feature."""

from __future__ import annotations

import copy
from typing import Any

from plugins.node_declared_features.requirements import RESTART_ALL_CONTAINERS
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness

RULE = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}


def restarting(name: str, cpu: str = "100m") -> dict[str, Any]:
    container = {
        "name": "c",
        "image": "app",
        "restartPolicy": "Never",
        "restartPolicyRules": [RULE],
        "resources": {"requests": {"cpu": cpu}},
    }
    return make_pod(name).spec(containers=[container]).dict()


async def test_pods_go_where_the_feature_is_declared_and_others_anywhere() -> None:
    async with Harness() as h:
        h.create(
            [
                make_node("old-1").capacity(cpu="8", memory="8Gi", pods="10").dict(),
                make_node("new").declared_features(RESTART_ALL_CONTAINERS).dict(),
                make_node("old-2").capacity(cpu="8", memory="8Gi", pods="10").dict(),
                *(restarting(f"r{i}") for i in range(4)),
                make_pod("plain").dict(),
            ]
        )
        await h.schedule_active()
        assert {h.node_of("default", f"r{i}") for i in range(4)} == {"new"}
        assert h.node_of("default", "plain") is not None


async def test_the_reason_reads_as_upstreams_and_a_declaring_node_brings_the_pod_back() -> None:
    async with Harness() as h:
        h.create(
            [
                make_node("small-new")
                .capacity(cpu="1", memory="8Gi", pods="10")
                .declared_features(RESTART_ALL_CONTAINERS)
                .dict(),
                make_node("big-old").capacity(cpu="8", memory="8Gi", pods="10").dict(),
                restarting("p", cpu="2"),
            ]
        )
        await h.schedule_active()
        assert h.node_of("default", "p") is None
        [note] = h.event_notes("default", "p", "FailedScheduling")
        assert note.startswith(
            "0/2 nodes are available: 1 Insufficient cpu, "
            "1 node(s) didn't match Pod's required features. "
        )

        # The kubelet restarts with the feature on and declares it.
        [stored] = [n for n in h.sim.objects("nodes") if n["metadata"]["name"] == "big-old"]
        node = copy.deepcopy(stored)
        node["status"]["declaredFeatures"] = [RESTART_ALL_CONTAINERS]
        await h.sim.update("nodes", node)
        await h.quiesce()
        # The node update requeued the pod (the hint said Queue); it waits out its backoff.
        assert h.scheduler.queue.pending_counts()["backoff"] == 1
        h.clock.advance(10)
        h.scheduler.queue.flush_backoff_completed()
        assert await h.schedule_active() == 1
        assert h.node_of("default", "p") == "big-old"
