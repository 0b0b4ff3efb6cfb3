"""`/metrics/resources`: the leader reports every pod of the cluster as kube-scheduler does.

kube-scheduler runs beside our daemon on the same apiserver; both scrapes of the same pods must
hold the same series with the same values (the Go client writes `1` where Python writes `1.0`,
so values are compared as numbers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import LeaderElection
from tests.e2e.daemon import Metrics
from tests.e2e.daemon import SchedulerDaemon
from tests.e2e.daemon import poll_until
from tests.e2e.secure_port_client import secure_port_call
from tests.e2e.upstream_scheduler import STARTUP_S
from tests.e2e.upstream_scheduler import start_kube_scheduler
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

BIND_TIMEOUT_S = 60.0
ELECTION_TIMEOUT_S = 60.0
SCRAPE_TIMEOUT_S = 30.0

Series = dict[tuple[str, frozenset[tuple[str, str]]], float]


def _leader_and_standby(
    first: SchedulerDaemon, second: SchedulerDaemon
) -> tuple[SchedulerDaemon, SchedulerDaemon] | None:
    leading = [
        d
        for d in (first, second)
        if d.metrics().total("leader_election_master_status", name="kube-scheduler") == 1
    ]
    if len(leading) != 1:
        return None
    return (first, second) if leading[0] is first else (second, first)


def test_metrics_resources_report_every_pod_from_the_leader_only(
    daemons: DaemonLauncher, workload: Workload, namespace: str
) -> None:
    ours = unique("sched")
    election = LeaderElection(namespace, unique("lease"))
    workload.create_nodes(2, cpu="2")
    first = daemons.start(ours, label="a", leader_election=election)
    second = daemons.start(ours, label="b", leader_election=election)
    leader, standby = poll_until(
        lambda: _leader_and_standby(first, second),
        "one replica leading",
        timeout_s=ELECTION_TIMEOUT_S,
    )
    manifest = workload.pod_manifest("sized", ours, cpu="250m")
    [main] = manifest["spec"]["containers"]
    main["resources"] = {
        "requests": {"cpu": "250m", "memory": "64Mi"},
        "limits": {"memory": "128Mi"},
    }
    sidecar = {**main, "name": "sidecar", "restartPolicy": "Always"}
    sidecar["resources"] = {"requests": {"cpu": "100m"}}
    manifest["spec"]["initContainers"] = [sidecar]
    workload.create_pod(manifest)
    [too_big] = workload.create_pods(["too-big"], ours, cpu="8")
    placed = workload.wait_bound(["sized"], timeout_s=BIND_TIMEOUT_S)

    def scrape_with_the_binding() -> Metrics | None:
        answer = leader.get("/metrics/resources")
        assert answer.status == 200, answer
        metrics = Metrics(answer.body)
        seen = metrics.labelled("kube_pod_resource_request")
        return metrics if any(s["pod"] == "sized" and s["node"] for s in seen) else None

    metrics = poll_until(scrape_with_the_binding, "the binding in the scrape", timeout_s=30)
    request, limit = "kube_pod_resource_request", "kube_pod_resource_limit"
    mine = {"namespace": namespace, "pod": "sized", "node": placed["sized"], "scheduler": ours}
    # The sidecar runs beside the container: 250m + 100m.
    assert metrics.total(request, **mine, resource="cpu", unit="cores") == pytest.approx(0.35)
    assert metrics.total(request, **mine, resource="memory", unit="bytes") == 64 * 1024**2
    assert metrics.total(limit, **mine, resource="memory", unit="bytes") == 128 * 1024**2
    assert not [
        s for s in metrics.labelled(limit) if s["pod"] == "sized" and s["resource"] == "cpu"
    ]
    pending = {"namespace": namespace, "pod": too_big, "node": "", "resource": "cpu"}
    assert metrics.total(request, **pending) == 8.0
    standby_answer = standby.get("/metrics/resources")
    assert (standby_answer.status, standby_answer.body) == (200, "")


def _series(text: str, namespace: str) -> Series:
    """The namespace's samples: (family, labels) -> value."""
    return {
        (name, frozenset(labels.items())): value
        for name, labels, value in Metrics(text).samples
        if labels.get("namespace") == namespace
    }


def _pod(workload: Workload, name: str, scheduler: str, **spec: Any) -> dict[str, Any]:
    manifest = workload.pod_manifest(name, scheduler)
    [main] = manifest["spec"]["containers"]
    main["resources"] = spec.pop("resources", {})
    for container in spec.pop("initContainers", ()):
        manifest["spec"].setdefault("initContainers", []).append(
            {"image": main["image"], **container}
        )
    manifest["spec"].update(spec)
    return manifest


def test_metrics_resources_match_kube_schedulers(
    e2e_binaries: ControlPlaneBinaries,
    control_plane: ControlPlane,
    daemons: DaemonLauncher,
    workload: Workload,
    namespace: str,
    tmp_path: Path,
) -> None:
    # Nobody schedules these pods: both schedulers only watch them.
    nobody = unique("nobody")
    [node] = workload.create_nodes(1, cpu="4")
    shapes: dict[str, dict[str, Any]] = {
        "limits": {
            "resources": {
                "requests": {"cpu": "250m", "memory": "64Mi", "ephemeral-storage": "1Gi"},
                "limits": {"cpu": "1", "memory": "128Mi"},
            }
        },
        "sidecar-and-init": {
            "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "32Mi"}},
            "initContainers": [
                {
                    "name": "sidecar",
                    "restartPolicy": "Always",
                    "resources": {"requests": {"cpu": "200m"}, "limits": {"memory": "16Mi"}},
                },
                {"name": "setup", "resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}}},
            ],
        },
        "pod-level": {
            "resources": {"requests": {"cpu": "100m"}},
            "resources_pod": {"requests": {"cpu": "2", "memory": "1Gi"}},
        },
        "pod-level-hugepages": {
            "resources": {
                "requests": {"cpu": "100m", "hugepages-2Mi": "2Mi"},
                "limits": {"hugepages-2Mi": "2Mi"},
            },
            "resources_pod": {
                "requests": {"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "6Mi"},
                "limits": {"memory": "1Gi", "hugepages-2Mi": "6Mi"},
            },
        },
        "extended-and-hugepages": {
            "resources": {
                "requests": {"example.com/gpu": "2", "hugepages-2Mi": "4Mi", "cpu": "1"},
                "limits": {"example.com/gpu": "2", "hugepages-2Mi": "4Mi", "cpu": "1"},
            }
        },
        "bound": {"resources": {"requests": {"cpu": "300m"}}, "nodeName": node},
        "best-effort": {},
    }
    for name, shape in shapes.items():
        spec = dict(shape)
        pod_level = spec.pop("resources_pod", None)
        manifest = _pod(workload, name, nobody, **spec)
        if pod_level is not None:
            manifest["spec"]["resources"] = pod_level
        workload.create_pod(manifest)

    ours = daemons.start(unique("sched"))
    upstream, upstream_port = start_kube_scheduler(
        e2e_binaries,
        control_plane,
        control_plane.kubeconfig_path,
        tmp_path / "kube-scheduler.log",
    )
    admin_cert = control_plane.admin_cert_paths
    expected_pods = set(shapes) - {"best-effort"}
    try:
        upstream.wait_until(
            lambda: _complete(upstream_port, admin_cert, namespace, expected_pods) is not None,
            STARTUP_S,
            "kube-scheduler's /metrics/resources",
        )
        theirs = _complete(upstream_port, admin_cert, namespace, expected_pods)
    finally:
        upstream.stop()
    mine = poll_until(
        lambda: _complete(ours.port, admin_cert, namespace, expected_pods),
        "our /metrics/resources listing the pods",
        timeout_s=SCRAPE_TIMEOUT_S,
    )

    assert theirs is not None
    assert mine == theirs
    # A few values spelled out, so the comparison cannot pass on two empty scrapes.
    request = "kube_pod_resource_request"
    by_pod = {
        (name, dict(labels)["pod"], dict(labels)["resource"]): value
        for (name, labels), value in mine.items()
    }
    assert by_pod[(request, "sidecar-and-init", "cpu")] == pytest.approx(1.7)
    assert by_pod[(request, "pod-level", "cpu")] == 2.0
    assert by_pod[(request, "pod-level-hugepages", "hugepages-2Mi")] == 6 * 1024**2
    assert by_pod[(request, "bound", "cpu")] == pytest.approx(0.3)
    assert by_pod[(request, "extended-and-hugepages", "hugepages-2Mi")] == 4 * 1024**2
    assert by_pod[("kube_pod_resource_limit", "sidecar-and-init", "memory")] == 48 * 1024**2
    assert not [key for key in by_pod if key[1] == "best-effort"]


def _complete(port: int, cert: tuple[Path, Path], namespace: str, pods: set[str]) -> Series | None:
    """The namespace's series once every pod in `pods` has some (a scheduler that has just
    started may not know the client CA yet, and answer 403 until it does)."""
    status, body = secure_port_call(port, "/metrics/resources", client_cert=cert)
    if status != 200:
        return None
    series = _series(body, namespace)
    seen = {dict(labels)["pod"] for _, labels in series}
    return series if seen == pods else None
