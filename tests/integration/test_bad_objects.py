"""Objects the scheduler cannot read are skipped with a warning; everything else goes on."""

from __future__ import annotations

from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.conftest import CapturedLogs
from tests.integration.harness import Harness


async def test_an_unreadable_pod_does_not_stop_scheduling(captured_logs: CapturedLogs) -> None:
    bad = make_pod("bad").req(cpu="lots").dict()
    bad_node = make_node("bad-node").capacity(cpu="four", memory="1Gi", pods="10").dict()
    async with Harness() as h:
        h.create([make_node("n1").dict(), bad_node, bad, make_pod("good").req(cpu="1").dict()])
        await h.schedule_active()
        assert h.node_of("default", "good") == "n1"
        assert h.node_of("default", "bad") is None
        assert h.scheduler.cache.node_info("bad-node") is None
        messages = [r["err"] for r in captured_logs.records("warning")]
        assert any(
            "Pod default/bad: container 'main' resources.requests.cpu" in m for m in messages
        ), messages
        assert any("Node bad-node: status.allocatable.cpu" in m for m in messages), messages
        # Fixing the pod makes it schedulable: nothing about it was lost.
        fixed = make_pod("bad").req(cpu="1").dict()
        current = h.pod("default", "bad")
        fixed["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        fixed["metadata"]["uid"] = current["metadata"]["uid"]
        await h.sim.update("pods", fixed)
        await h.schedule_active()
        assert h.node_of("default", "bad") == "n1"


async def test_a_pod_with_malformed_raw_fields_is_skipped_before_any_plugin_reads_them(
    captured_logs: CapturedLogs,
) -> None:
    # PodTopologySpread and the volume plugins read these fields during a cycle; a wrong type
    # there must not reach them (it would fail inside the scheduling loop).
    spread = make_pod("spread").req(cpu="1").dict()
    spread["spec"]["topologySpreadConstraints"] = [True]
    volumes = make_pod("volumes").req(cpu="1").dict()
    volumes["spec"]["volumes"] = [{"name": "v", "persistentVolumeClaim": "claim"}]
    labels = make_pod("labels").req(cpu="1").dict()
    labels["metadata"]["labels"] = {"app": ["web"]}
    async with Harness() as h:
        h.create([make_node("n1").dict(), spread, volumes, labels])
        h.create([make_pod("good").req(cpu="1").dict()])
        await h.schedule_active()
        assert h.node_of("default", "good") == "n1"
        messages = [r["err"] for r in captured_logs.records("warning")]
        for expected in (
            "Pod default/spread: spec.topologySpreadConstraints[0]: must be an object",
            "Pod default/volumes: spec.volumes[0].persistentVolumeClaim: must be an object",
            "Pod default/labels: metadata.labels: 'app': keys and values must be strings",
        ):
            assert any(expected in m for m in messages), (expected, messages)
