"""The daemon, run as a user runs it, scheduling against a real kube-apiserver."""

from __future__ import annotations

import re
import socket
import time
from collections import Counter

import pytest

from tests.e2e.api_client import ApiClient
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import poll_until
from tests.e2e.workload import Workload
from tests.e2e.workload import cpu_millis
from tests.e2e.workload import pod_scheduled_condition
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

# Upper bounds for waiting on the daemon and the server, not synchronisation delays.
BIND_TIMEOUT_S = 120.0
EVENT_TIMEOUT_S = 30.0
# A pod that an added node makes schedulable must not wait for the 5-minute unschedulable flush.
NODE_ADD_RESCHEDULE_S = 30.0

# kube-scheduler's FitError text: "0/N nodes are available: <histogram>." and, from the
# PostFilter plugins, DynamicResources' " no new claims to deallocate," (the pod has no
# claims) and DefaultPreemption's " preemption: 0/N nodes are available: <histogram>."
FIT_ERROR = re.compile(
    r"^0/(?P<n>\d+) nodes are available: (?P<filter>.+?)\."
    r"(?: no new claims to deallocate,)?"
    r"(?: preemption: 0/(?P<pn>\d+) nodes are available: (?P<preemption>.+)\.)?$"
)


def _histogram(text: str) -> dict[str, int]:
    """{reason: count} of "<count> <reason>, ..."; the entries must be string-sorted."""
    entries = text.split(", ")
    assert entries == sorted(entries), f"reasons must be string-sorted: {text}"
    counts: dict[str, int] = {}
    for entry in entries:
        count, reason = entry.split(" ", 1)
        counts[reason] = int(count)
    return counts


def _node_count(admin: ApiClient) -> int:
    return len(admin.get("/api/v1/nodes").body["items"])


def test_200_pods_are_bound_with_scheduled_events_and_foreign_pods_are_untouched(
    daemons: DaemonLauncher, workload: Workload
) -> None:
    ours, theirs = unique("sched"), unique("other-sched")
    nodes = set(workload.create_nodes(20))
    daemon = daemons.start(ours)
    # Foreign pods go first, in between and last: the daemon's pod watch delivers them in
    # order, so once our last pod is bound the daemon has seen every foreign one.
    foreign = workload.create_pods([f"foreign-{i}" for i in range(5)], theirs)
    pods = workload.create_pods([f"p{i:03}" for i in range(100)], ours)
    foreign += workload.create_pods([f"foreign-{i}" for i in range(5, 10)], theirs)
    pods += workload.create_pods([f"p{i:03}" for i in range(100, 200)], ours)
    foreign += workload.create_pods([f"foreign-{i}" for i in range(10, 15)], theirs)

    placed = workload.wait_bound(pods, timeout_s=BIND_TIMEOUT_S)
    scheduled = workload.wait_events("Scheduled", pods, timeout_s=EVENT_TIMEOUT_S)

    assert set(placed.values()) <= nodes
    per_node = Counter(placed.values())
    # 200 equal pods on 20 equal nodes, scored least-allocated: spread evenly.
    assert len(per_node) == 20
    assert max(per_node.values()) - min(per_node.values()) <= 2, per_node
    for name in pods:
        [event] = scheduled[name]
        assert event["reportingController"] == ours
        # Upstream's recorder: `<profile>-<hostname>`, and no deprecatedSource.
        assert event["reportingInstance"] == f"{ours}-{socket.gethostname()}"
        assert not event.get("deprecatedSource"), event["deprecatedSource"]
        assert (event["type"], event["action"]) == ("Normal", "Binding")
        note = f"Successfully assigned {workload.namespace}/{name} to {placed[name]}"
        assert event["note"] == note
        assert event["regarding"]["kind"] == "Pod"
    everything = workload.pods()
    events = workload.events()
    for name in foreign:
        assert not everything[name]["spec"].get("nodeName"), name
        assert pod_scheduled_condition(everything[name]) is None, name
        assert [e for e in events if e["regarding"]["name"] == name] == []
    # None of the foreign pods ever entered the daemon's queue.
    incoming = daemon.metrics().total("scheduler_queue_incoming_pods_total")
    assert incoming == len(pods)


def test_unschedulable_pod_gets_condition_and_event_then_a_new_node_takes_it(
    admin: ApiClient, daemons: DaemonLauncher, workload: Workload
) -> None:
    ours, theirs = unique("sched"), unique("other-sched")
    small = workload.create_nodes(2, cpu="1")
    # Occupants of equal priority: the pod would fit without them, but may not preempt them.
    for i, node in enumerate(small):
        workload.create_pods([f"occupant-{i}"], theirs, cpu="600m", node_name=node)
    daemons.start(ours)
    [name] = workload.create_pods(["big"], ours, cpu="800m")
    total_nodes = _node_count(admin)
    elsewhere = total_nodes - len(small)

    def unschedulable() -> dict[str, object] | None:
        condition = pod_scheduled_condition(workload.pods()[name])
        return dict(condition) if condition and condition.get("status") == "False" else None

    condition = poll_until(unschedulable, "PodScheduled=False", timeout_s=EVENT_TIMEOUT_S)
    [event, *_] = workload.wait_events("FailedScheduling", [name], timeout_s=EVENT_TIMEOUT_S)[name]

    assert condition["reason"] == "Unschedulable"
    assert condition["message"] == event["note"]
    assert condition["observedGeneration"] == workload.pods()[name]["metadata"]["generation"]
    assert (event["type"], event["action"]) == ("Warning", "Scheduling")
    assert event["reportingController"] == ours
    match = FIT_ERROR.match(event["note"])
    assert match is not None, event["note"]
    assert int(match["n"]) == total_nodes
    not_selected = "node(s) didn't match Pod's node affinity/selector"
    assert _histogram(match["filter"]) == {
        "Insufficient cpu": len(small),
        **({not_selected: elsewhere} if elsewhere else {}),
    }
    assert match["preemption"] is not None, event["note"]
    assert int(match["pn"]) == total_nodes
    assert _histogram(match["preemption"]) == {
        "No preemption victims found for incoming pod": len(small),
        **({"Preemption is not helpful for scheduling": elsewhere} if elsewhere else {}),
    }

    added_at = time.monotonic()
    big_node = workload.create_node(cpu="4")
    placed = workload.wait_bound([name], timeout_s=NODE_ADD_RESCHEDULE_S)
    elapsed = time.monotonic() - added_at

    assert placed == {name: big_node}
    assert elapsed < NODE_ADD_RESCHEDULE_S
    condition_after = pod_scheduled_condition(workload.pods()[name])
    assert condition_after is not None and condition_after["status"] == "True"


def test_pods_bound_by_another_scheduler_take_capacity(
    daemons: DaemonLauncher, workload: Workload
) -> None:
    ours, theirs = unique("sched"), unique("other-sched")
    nodes = workload.create_nodes(4, cpu="4")
    # Bound before the daemon starts (seen in its first list) ...
    workload.create_pods(["foreign-0"], theirs, cpu="3500m", node_name=nodes[0])
    workload.create_pods(["foreign-1"], theirs, cpu="3500m", node_name=nodes[1])
    daemon = daemons.start(ours)
    daemon.wait_ready()
    # ... and after (seen through its watch, before any of our pods: the watch keeps order).
    workload.create_pods(["foreign-2"], theirs, cpu="3500m", node_name=nodes[2])
    ours_pods = workload.create_pods([f"p{i:02}" for i in range(16)], ours, cpu="500m")
    # 500m free on each of three nodes and 4000m on the fourth: room for 1 + 1 + 1 + 8 pods.
    fits = 11

    def settled() -> dict[str, str] | None:
        placed = workload.placements(ours_pods)
        rejected = [
            n
            for n, pod in workload.pods().items()
            if n in ours_pods
            and (pod_scheduled_condition(pod) or {}).get("reason") == "Unschedulable"
        ]
        bound = [n for n, node in placed.items() if node]
        return placed if len(bound) == fits and len(rejected) == len(ours_pods) - fits else None

    placed = poll_until(settled, f"{fits} bound, the rest unschedulable", timeout_s=BIND_TIMEOUT_S)

    assert Counter(node for node in placed.values() if node) == {
        nodes[0]: 1,
        nodes[1]: 1,
        nodes[2]: 1,
        nodes[3]: 8,
    }
    requested: Counter[str] = Counter()
    for pod in workload.pods().values():
        node = pod["spec"].get("nodeName")
        if node:
            requested[node] += cpu_millis(pod)
    for node in nodes:
        assert requested[node] <= 4000, (node, requested[node])
