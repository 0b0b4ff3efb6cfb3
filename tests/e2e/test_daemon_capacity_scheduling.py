"""Elastic quotas against a real kube-apiserver with the ElasticQuota CRD installed.

Two namespaces with quotas of min 2 / max 4 CPU on 4 CPUs: the first runs four 1-CPU pods,
two of them on the second's idle min. When the second's two pods arrive, exactly two of the
first's pods are preempted (no kubelet runs, so a `Reaper` finishes the deletions), the
second's pods are bound, and each quota's status.used says 2 CPUs.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from scheduler.testing import make_pod
from tests.e2e.api_client import ApiClient
from tests.e2e.custom_resources import install_crds
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import poll_until
from tests.e2e.reaper import Reaper
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

CONFIG = (
    Path(__file__).resolve().parents[2] / "deploy" / "examples" / "capacity-scheduling-config.yaml"
)
QUOTAS = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/elasticquotas"
# Upper bounds for waiting on the daemon and the server, not synchronisation delays.
BIND_TIMEOUT_S = 60.0
STATUS_TIMEOUT_S = 30.0


def _namespace(admin: ApiClient) -> str:
    name = f"e2e-{uuid.uuid4().hex[:10]}"
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    created = admin.post("/api/v1/namespaces", body)
    assert created.status == 201, created
    return name


def _quota(admin: ApiClient, namespace: str) -> None:
    body = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "quota"},
        "spec": {"min": {"cpu": "2"}, "max": {"cpu": "4"}},
    }
    created = admin.post(QUOTAS.format(namespace=namespace), body)
    assert created.status == 201, created


def _pods(workload: Workload, scheduler: str, prefix: str, count: int) -> list[str]:
    names = []
    for i in range(count):
        builder = make_pod(f"{prefix}-{i}", workload.namespace).scheduler(scheduler).req(cpu="1")
        manifest: dict[str, Any] = builder.node_selector(**workload.node_selector).dict()
        manifest["metadata"].pop("uid")
        workload.create_pod(manifest)
        names.append(f"{prefix}-{i}")
    return names


def _used(admin: ApiClient, namespace: str) -> dict[str, Any]:
    body = admin.get(f"{QUOTAS.format(namespace=namespace)}/quota").body
    return dict((body.get("status") or {}).get("used") or {})


def test_reclaim_preempts_exactly_the_borrowing_pods(
    admin: ApiClient, daemons: DaemonLauncher, workload: Workload
) -> None:
    install_crds(admin)
    ours = unique("quota")
    workload.create_nodes(2, cpu="2")
    lender = Workload(admin, _namespace(admin))
    # The lender's pods must land on the same nodes.
    lender.label_value = workload.label_value
    _quota(admin, workload.namespace)
    _quota(admin, lender.namespace)
    daemon = daemons.start(ours, extra_args=[f"--config={CONFIG}"])
    daemon.wait_ready()

    borrowers = _pods(workload, ours, "a", 4)
    workload.wait_bound(borrowers, timeout_s=BIND_TIMEOUT_S)
    with Reaper(admin, workload.namespace) as reaper:
        claimed = _pods(lender, ours, "b", 2)
        placed = lender.wait_bound(claimed, timeout_s=BIND_TIMEOUT_S)
    assert set(placed) == set(claimed)
    reaped = reaper.reaped
    assert len(reaped) == 2, sorted(reaped)
    assert set(reaped) <= set(borrowers)
    survivors = workload.pods()
    assert sorted(survivors) == sorted(set(borrowers) - set(reaped))
    assert all(p["spec"].get("nodeName") for p in survivors.values())
    poll_until(
        lambda: (
            _used(admin, workload.namespace) == {"cpu": "2"}
            and _used(admin, lender.namespace) == {"cpu": "2"}
        ),
        "status.used of both quotas at 2 CPUs",
        timeout_s=STATUS_TIMEOUT_S,
    )
