"""The daemon preempts against a real kube-apiserver: the cheapest victims, budgets respected.

Three full nodes of 2 CPU each and a 2-CPU pod of priority 100 that fits nowhere:
- node A: one pod of priority 0, protected by a PodDisruptionBudget that allows no disruption;
- node B: two pods of priority 10 (1 CPU each);
- node C: one pod of priority 10 (2 CPU).
Without the budget, A's single priority-0 pod would be the cheapest victim. With it, preemption
prefers the candidates that violate no budget (B and C) and among those the one with the fewest
victims of the lowest total priority: C.

No kubelet runs, so a `Reaper` finishes the graceful deletions the daemon starts.
"""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from typing import Any

import pytest

from scheduler.testing import make_pod
from tests.e2e.api_client import ApiClient
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import Metrics
from tests.e2e.daemon import poll_until
from tests.e2e.reaper import Reaper
from tests.e2e.workload import Object
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

PDB_PATH = "/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets"
MERGE_PATCH = "application/merge-patch+json"
PROTECTED_APP = "protected"
# The condition a scheduler puts on the pods it preempts (the API's names, not ours).
DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
# Upper bounds for waiting on the daemon and the server, not synchronisation delays.
BIND_TIMEOUT_S = 60.0
EVENT_TIMEOUT_S = 30.0


def running_pod(
    workload: Workload, name: str, node: str, *, cpu: str, priority: int, app: str
) -> Object:
    """Creates a pod already bound to `node`, Running since now (no kubelet will say so)."""
    builder = make_pod(name, workload.namespace).req(cpu=cpu).priority(priority).node(node)
    manifest = builder.label("app", app).node_selector(**workload.node_selector).dict()
    manifest["metadata"].pop("uid")
    created = workload.create_pod(manifest)
    # The server resets the status of a new pod to Pending; only the status subresource sets it.
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    status = {"phase": "Running", "startTime": now}
    path = f"/api/v1/namespaces/{workload.namespace}/pods/{name}/status"
    patched = workload.admin.request("PATCH", path, {"status": status}, content_type=MERGE_PATCH)
    assert patched.status == 200, patched
    assert patched.body["status"]["phase"] == "Running"
    return created


def _exhausted_budget(admin: ApiClient, namespace: str, app: str) -> None:
    """A PodDisruptionBudget over `app` that allows no disruption.

    Without kube-controller-manager nobody computes a budget's status, so the test writes what
    the disruption controller would for one healthy pod and minAvailable 1.
    """
    collection = PDB_PATH.format(namespace=namespace)
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": app},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": app}}},
    }
    created = admin.post(collection, budget)
    assert created.status == 201, created
    status = {
        "observedGeneration": created.body["metadata"]["generation"],
        "disruptionsAllowed": 0,
        "currentHealthy": 1,
        "desiredHealthy": 1,
        "expectedPods": 1,
    }
    patched = admin.request(
        "PATCH", f"{collection}/{app}/status", {"status": status}, content_type=MERGE_PATCH
    )
    assert patched.status == 200, patched
    assert patched.body["status"]["disruptionsAllowed"] == 0


def _condition(pod: Object, kind: str) -> dict[str, Any] | None:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == kind:
            return condition  # type: ignore[no-any-return]
    return None


def test_preemption_picks_the_fewest_unprotected_victims_and_spares_the_budgeted_pod(
    admin: ApiClient, daemons: DaemonLauncher, workload: Workload
) -> None:
    ours = unique("sched")
    node_a, node_b, node_c = workload.create_nodes(3, cpu="2")
    protected = running_pod(workload, "protected", node_a, cpu="2", priority=0, app=PROTECTED_APP)
    _exhausted_budget(admin, workload.namespace, PROTECTED_APP)
    for i in range(2):
        running_pod(workload, f"b-{i}", node_b, cpu="1", priority=10, app="filler")
    victim = running_pod(workload, "c-0", node_c, cpu="2", priority=10, app="filler")
    daemon = daemons.start(ours)
    # Every pod and the budget are in the daemon's caches before the preemptor arrives.
    daemon.wait_ready()

    with Reaper(admin, workload.namespace) as reaper:
        builder = make_pod("preemptor", workload.namespace).scheduler(ours).priority(100)
        manifest = builder.req(cpu="2").node_selector(**workload.node_selector).dict()
        manifest["metadata"].pop("uid")
        preemptor = workload.create_pod(manifest)
        placed = workload.wait_bound(["preemptor"], timeout_s=BIND_TIMEOUT_S)
        preempted = workload.wait_events("Preempted", ["c-0"], timeout_s=EVENT_TIMEOUT_S)
    reaped = reaper.reaped
    history = reaper.versions("preemptor")

    assert placed == {"preemptor": node_c}
    # The only victim: C's pod, marked as a disruption target before its deletion.
    assert reaped.keys() == {"c-0"}
    assert reaped["c-0"]["metadata"]["uid"] == victim["metadata"]["uid"]
    condition = _condition(reaped["c-0"], DISRUPTION_TARGET)
    assert condition is not None, reaped["c-0"]["status"]
    assert (condition["status"], condition["reason"]) == ("True", PREEMPTION_BY_SCHEDULER)
    assert condition["message"] == f"{ours}: preempting to accommodate a higher priority pod"
    # The preemptor was nominated to C while still unbound, then bound there.
    nominated = [v for v in history if (v.get("status") or {}).get("nominatedNodeName") == node_c]
    assert nominated, [v.get("status") for v in history]
    assert not nominated[0]["spec"].get("nodeName")
    # One Preempted event on the victim, naming the preemptor and the node.
    [event] = preempted["c-0"]
    preemptor_uid = preemptor["metadata"]["uid"]
    assert (event["type"], event["action"]) == ("Normal", "Preempting")
    assert event["note"] == f"Preempted by pod {preemptor_uid} on node {node_c}"
    assert event["reportingController"] == ours
    assert (event["related"]["name"], event["related"]["uid"]) == ("preemptor", preemptor_uid)
    assert workload.events_by_pod("Preempted").keys() == {"c-0"}
    # Everything else is untouched: still there, on its node, not terminating.
    survivors = workload.pods()
    assert "c-0" not in survivors
    expected = {"protected": node_a, "b-0": node_b, "b-1": node_b, "preemptor": node_c}
    assert {n: p["spec"]["nodeName"] for n, p in survivors.items()} == expected
    for name, pod in survivors.items():
        assert not pod["metadata"].get("deletionTimestamp"), name
        assert _condition(pod, DISRUPTION_TARGET) is None, name
    assert survivors["protected"]["metadata"]["uid"] == protected["metadata"]["uid"]

    # kube-scheduler's preemption families, as a dashboard reads them from the leader, once the
    # background task that deleted the victim has ended.
    def ended() -> Metrics | None:
        scraped = daemon.metrics()
        done = scraped.total("scheduler_preemption_goroutines_execution_total")
        return scraped if done else None

    metrics = poll_until(ended, "the preemption task ended", timeout_s=EVENT_TIMEOUT_S)
    assert metrics.total("scheduler_preemption_attempts_total") >= 1
    assert metrics.total("scheduler_preemption_victims_count") == 1
    assert metrics.total("scheduler_preemption_victims_sum") == 1
    assert metrics.total("scheduler_preemption_goroutines_execution_total", result="success") == 1
