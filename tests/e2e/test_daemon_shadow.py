"""Shadow mode beside the real kube-scheduler: it compares every Binding and binds nothing.

kube-scheduler is the production scheduler here, with a profile of its own name. Two shadow
daemons watch the same pods: one with the same (default) profile, one with a deliberately
different one (bin-packing scores, and an added node affinity that rules out half the nodes).
Both run under an identity that may only read, and they are checked to have sent no request
but reads at all.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.api_client import ApiClient
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import Metrics
from tests.e2e.daemon import SchedulerDaemon
from tests.e2e.daemon import poll_until
from tests.e2e.processes import ManagedProcess
from tests.e2e.processes import free_loopback_port
from tests.e2e.read_only_user import grant_read_only
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

PODS = 200
NODES = 20
BIND_TIMEOUT_S = 120.0
COMPARE_TIMEOUT_S = 60.0
TRIAL_LABEL = "shadow.e2e/trial"
WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
MERGE_PATCH = "application/merge-patch+json"


def _read_only_kubeconfig(control_plane: ControlPlane) -> Path:
    """A user that may get, list and watch everything, and write nothing."""
    admin = control_plane.admin_client()
    user = unique("shadow-reader")
    grant_read_only(admin, user)
    return control_plane.client_kubeconfig(user, [])


def _write_yaml(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


@pytest.fixture
def kube_scheduler(
    e2e_binaries: ControlPlaneBinaries, control_plane: ControlPlane, tmp_path: Path
) -> Iterator[tuple[str, ManagedProcess]]:
    """kube-scheduler as the production scheduler, serving a profile of its own name; it is
    started by the test, once the shadows watch."""
    name = unique("production")
    config = _write_yaml(
        tmp_path / "kube-scheduler.yaml",
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(control_plane.kubeconfig_path)},
            "leaderElection": {"leaderElect": False},
            "profiles": [{"schedulerName": name}],
        },
    )
    kubeconfig = control_plane.kubeconfig_path
    process = ManagedProcess(
        "kube-scheduler",
        [
            str(e2e_binaries.kube_scheduler),
            f"--config={config}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={free_loopback_port()}",
        ],
        tmp_path / "kube-scheduler.log",
    )
    try:
        yield name, process
    finally:
        process.stop()


def _candidate_config(path: Path, scheduler_name: str) -> Path:
    """Packs pods (MostAllocated) and only accepts nodes labelled for the trial."""
    affinity = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": TRIAL_LABEL, "operator": "In", "values": ["yes"]}]}
        ]
    }
    return _write_yaml(
        path,
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "leaderElection": {"leaderElect": False},
            "profiles": [
                {
                    "schedulerName": scheduler_name,
                    "pluginConfig": [
                        {
                            "name": "NodeResourcesFit",
                            "args": {
                                "scoringStrategy": {
                                    "type": "MostAllocated",
                                    "resources": [
                                        {"name": "cpu", "weight": 1},
                                        {"name": "memory", "weight": 1},
                                    ],
                                }
                            },
                        },
                        {
                            "name": "NodeAffinity",
                            "args": {
                                "addedAffinity": {
                                    "requiredDuringSchedulingIgnoredDuringExecution": affinity
                                }
                            },
                        },
                    ],
                }
            ],
        },
    )


def _start_shadow(
    daemons: DaemonLauncher,
    control_plane: ControlPlane,
    scheduler_name: str,
    label: str,
    report: Path,
    extra: list[str],
) -> SchedulerDaemon:
    daemon = daemons.start(
        scheduler_name,
        label=label,
        kubeconfig=_read_only_kubeconfig(control_plane),
        # The secure port's reviews are not the shadow's cluster identity; with /metrics
        # always allowed and client certificates, it sends none anyway.
        review_kubeconfig=control_plane.kubeconfig_path,
        extra_args=[
            "--shadow",
            f"--shadow-report={report}",
            "--shadow-report-interval=1s",
            "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
            *extra,
        ],
    )
    daemon.wait_ready()
    return daemon


def _compared(daemon: SchedulerDaemon) -> Metrics | None:
    metrics = daemon.metrics()
    return metrics if metrics.total("scheduler_shadow_comparisons_total") >= PODS else None


def _report(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    report: dict[str, Any] = json.loads(path.read_text())
    return report if report["compared"] >= PODS else None


def _label_trial_nodes(admin: ApiClient, nodes: list[str]) -> set[str]:
    trial = set(nodes[: len(nodes) // 2])
    for node in trial:
        patched = admin.request(
            "PATCH",
            f"/api/v1/nodes/{node}",
            {"metadata": {"labels": {TRIAL_LABEL: "yes"}}},
            content_type=MERGE_PATCH,
        )
        assert patched.status == 200, patched
    return trial


def _assert_read_only(daemon: SchedulerDaemon, metrics: Metrics) -> None:
    for method in WRITE_METHODS:
        assert metrics.total("rest_client_requests_total", method=method) == 0, method
    assert metrics.total("rest_client_requests_total", code="403") == 0
    assert metrics.total("rest_client_requests_total", method="GET") > 0
    assert not daemon.records("Shadow mode refused writes")


def test_shadow_mode_compares_every_binding_of_kube_scheduler_and_binds_nothing(
    control_plane: ControlPlane,
    admin: ApiClient,
    daemons: DaemonLauncher,
    workload: Workload,
    kube_scheduler: tuple[str, ManagedProcess],
    tmp_path: Path,
) -> None:
    production, upstream = kube_scheduler
    nodes = workload.create_nodes(NODES)
    trial = _label_trial_nodes(admin, nodes)
    same_report, other_report = tmp_path / "same.json", tmp_path / "other.json"
    same = _start_shadow(daemons, control_plane, production, "same", same_report, [])
    candidate = _candidate_config(tmp_path / "candidate.yaml", production)
    other = _start_shadow(
        daemons, control_plane, production, "other", other_report, [f"--config={candidate}"]
    )

    upstream.start()
    pods = workload.create_pods([f"p{i:03}" for i in range(PODS)], production)
    placed = workload.wait_bound(pods, timeout_s=BIND_TIMEOUT_S)

    # The same profile: every pod compared, none rejected by a filter. Its disagreements are the
    # noise floor of the comparison: in a burst kube-scheduler counts pods it has assumed but
    # whose Bindings the watch has not shown yet, so a node may look one pod emptier to the
    # shadow; they can only be lower scores.
    same_metrics = poll_until(
        lambda: _compared(same), "same: compared", timeout_s=COMPARE_TIMEOUT_S
    )
    same_result = poll_until(
        lambda: _report(same_report), "same: report", timeout_s=COMPARE_TIMEOUT_S
    )
    verdicts = same_result["byVerdict"]
    print(f"same profile: {same_result['agreed']}/{same_result['compared']} agree; {verdicts}")
    assert same_result["compared"] == PODS
    assert same_result["agreed"] + same_result["differed"] == PODS
    assert same_result["differed"] == verdicts["lower_score"]
    assert same_result["agreed"] >= PODS // 2, same_result["differing"][:5]
    agreed_metric = sum(
        same_metrics.total("scheduler_shadow_comparisons_total", verdict=v)
        for v in ("same_node", "tied_best")
    )
    assert agreed_metric == same_result["agreed"]

    # The different profile: pods kube-scheduler put on nodes outside the trial are reported
    # as rejected by NodeAffinity, the others mostly as scoring lower than a fuller node.
    other_metrics = poll_until(
        lambda: _compared(other), "other: compared", timeout_s=COMPARE_TIMEOUT_S
    )
    report = poll_until(lambda: _report(other_report), "other: report", timeout_s=COMPARE_TIMEOUT_S)
    verdicts = report["byVerdict"]
    print(f"different profile: {report['agreed']}/{report['compared']} agree; {verdicts}")
    outside = sorted(name for name, node in placed.items() if node not in trial)
    assert outside, "kube-scheduler spreads pods over every node"
    assert verdicts["filtered"] == len(outside)
    assert report["filteredByPlugin"] == {"NodeAffinity": len(outside)}
    assert other_metrics.total("scheduler_shadow_comparisons_total", plugin="NodeAffinity") == len(
        outside
    )
    assert verdicts["lower_score"] > 0
    assert report["agreed"] < same_result["agreed"]
    differing = {d["pod"].split("/", 1)[1]: d for d in report["differing"]}
    for name in outside:
        entry = differing[name]
        assert entry["verdict"] == "filtered"
        assert entry["plugin"] == "NodeAffinity"
        assert entry["boundNode"] == placed[name]
        assert "node affinity" in entry["reason"], entry
        assert set(entry["candidateNodes"]) <= trial
    reasons = Counter(d["verdict"] for d in differing.values())
    assert reasons["lower_score"] == verdicts["lower_score"]

    # Neither shadow wrote anything: only reads left them, and none was refused.
    for daemon in (same, other):
        _assert_read_only(daemon, daemon.metrics())
        assert daemon.running()
