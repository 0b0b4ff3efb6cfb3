"""A pod pinned by `matchFields` to a node that does not exist (a DaemonSet pod whose node was
just deleted has this shape): the daemon answers at once in kube-scheduler's words and goes on
scheduling everything else."""

from __future__ import annotations

import pytest

from tests.e2e.api_client import ApiClient
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

# Upper bounds for waiting on the daemon and the server, not synchronisation delays.
BIND_TIMEOUT_S = 60.0
EVENT_TIMEOUT_S = 30.0


def _pin_to(manifest: dict[str, object], node_name: str) -> dict[str, object]:
    spec = manifest["spec"]
    assert isinstance(spec, dict)
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    required = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    spec["affinity"] = {"nodeAffinity": required}
    return manifest


def test_pod_pinned_to_a_missing_node_fails_at_once_and_the_daemon_keeps_scheduling(
    admin: ApiClient, daemons: DaemonLauncher, workload: Workload
) -> None:
    ours = unique("sched")
    workload.create_nodes(2)
    daemon = daemons.start(ours)
    pinned = workload.pod_manifest("pinned", ours)
    workload.create_pod(_pin_to(pinned, unique("deleted-node")))
    before = workload.create_pods(["before-0", "before-1"], ours)

    [event, *_] = workload.wait_events("FailedScheduling", ["pinned"], timeout_s=EVENT_TIMEOUT_S)[
        "pinned"
    ]
    total = len(admin.get("/api/v1/nodes").body["items"])
    assert event["note"] == (
        f"0/{total} nodes are available: {total} node(s) didn't satisfy plugin(s) "
        f"[NodeAffinity]. no new claims to deallocate, preemption: 0/{total} nodes are available: "
        f"{total} Preemption is not helpful for scheduling."
    )
    # Pods created after the failure are scheduled too: the loop is still running.
    after = workload.create_pods(["after-0", "after-1"], ours)
    workload.wait_bound([*before, *after], timeout_s=BIND_TIMEOUT_S)
    assert not workload.placements(["pinned"])["pinned"]
    daemon.require_running("after the pinned pod failed")
