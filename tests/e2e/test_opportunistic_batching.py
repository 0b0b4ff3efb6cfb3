"""Opportunistic batching on a real apiserver, beside kube-scheduler v1.36: with the default
plugins but PodTopologySpread, the second of two alike pods takes the node next in the first
pod's ranking, unscored, on both schedulers, where scoring it afresh would choose another node
(the nodes and pods of tests/batching_scenario.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.compare_schedulers import scheduler_config
from tests.batching_scenario import NO_SPREADING
from tests.batching_scenario import NODE_CPUS
from tests.batching_scenario import preference_node
from tests.batching_scenario import preferred_terms
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.upstream_scheduler import SCHEDULER_NAME as UPSTREAM
from tests.e2e.upstream_scheduler import start_kube_scheduler
from tests.e2e.upstream_scheduler import upstream_metrics
from tests.e2e.upstream_scheduler import wait_upstream_ready
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

# Upper bounds for waiting on the servers, not synchronisation delays.
BIND_TIMEOUT_S = 60.0


def _config(control_plane: ControlPlane, path: Path, scheduler_name: str) -> Path:
    document = scheduler_config(
        control_plane.kubeconfig_path,
        scheduler_name,
        {"plugins": NO_SPREADING},
        percentage=None,
    )
    path.write_text(json.dumps(document))
    return path


def _nodes(workload: Workload, owner: str) -> dict[str, str]:
    """A, B and C for one scheduler's pods: node name by preference."""
    names: dict[str, str] = {}
    for preference in NODE_CPUS:
        name = unique(f"{owner}-{preference}")
        builder = preference_node(name, preference)
        builder.label("owner", f"{owner}-{workload.label_value}")
        manifest: dict[str, Any] = builder.dict()
        manifest["metadata"].pop("uid", None)
        created = workload.admin.post("/api/v1/nodes", manifest)
        assert created.status == 201, created
        workload.nodes.append(name)
        names[preference] = name
    return names


def _pod(workload: Workload, name: str, scheduler: str, owner: str) -> dict[str, Any]:
    manifest = workload.pod_manifest(name, scheduler, cpu="4")
    spec = manifest["spec"]
    spec["nodeSelector"] = {"owner": f"{owner}-{workload.label_value}"}
    [container] = spec["containers"]
    container["resources"]["requests"]["memory"] = "4Gi"
    preferred = {"preferredDuringSchedulingIgnoredDuringExecution": preferred_terms()}
    spec["affinity"] = {"nodeAffinity": preferred}
    return manifest


def test_the_second_alike_pod_takes_the_next_node_of_the_first_ones_ranking(
    e2e_binaries: ControlPlaneBinaries,
    control_plane: ControlPlane,
    daemons: DaemonLauncher,
    workload: Workload,
    tmp_path: Path,
) -> None:
    ours = unique("sched")
    nodes = {owner: _nodes(workload, owner) for owner in ("ours", "theirs")}
    daemon = daemons.start(
        ours, extra_args=[f"--config={_config(control_plane, tmp_path / 'ours.json', ours)}"]
    )
    daemon.wait_ready()
    upstream, port = start_kube_scheduler(
        e2e_binaries,
        control_plane,
        control_plane.kubeconfig_path,
        tmp_path / "kube-scheduler.log",
        config=_config(control_plane, tmp_path / "theirs.json", UPSTREAM),
    )
    admin_cert = control_plane.admin_cert_paths
    try:
        wait_upstream_ready(upstream, port, admin_cert)
        for owner, scheduler in (("ours", ours), ("theirs", UPSTREAM)):
            for index in (1, 2):
                workload.create_pod(_pod(workload, f"{owner}-{index}", scheduler, owner))
        names = [f"{owner}-{index}" for owner in ("ours", "theirs") for index in (1, 2)]
        placed = workload.wait_bound(names, timeout_s=BIND_TIMEOUT_S)
        theirs = upstream_metrics(port, admin_cert)
    finally:
        upstream.stop()

    for owner in ("ours", "theirs"):
        taken = {placed[f"{owner}-1"], placed[f"{owner}-2"]}
        assert taken == {nodes[owner]["a"], nodes[owner]["c"]}, (owner, placed, nodes)
    mine = daemon.metrics()
    hint_used = {"result": "hint_used"}
    assert mine.total("scheduler_batch_attempts_total", profile=ours, **hint_used) == 1
    assert theirs.total("scheduler_batch_attempts_total", profile=UPSTREAM, **hint_used) == 1
