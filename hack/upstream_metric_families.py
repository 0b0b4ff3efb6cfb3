"""Write the metric families kube-scheduler exposes, for the comparison test to hold us to.

Starts the e2e control plane and the real kube-scheduler (leader-elected), schedules a few
pods (one unschedulable, one preempting another) so that the labelled families have series,
scrapes /metrics with the admin's certificate, and writes each family's type, stability,
labels and buckets as YAML:

    PYTHONPATH=. .venv/bin/python hack/upstream_metric_families.py \
        tests/observability/data/upstream_metrics.yaml

Families without any series are not on /metrics at all, as upstream's registry prints none.
"""

from __future__ import annotations

import re
import ssl
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.binaries import binaries_or_skip
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import poll_until
from tests.e2e.processes import ManagedProcess
from tests.e2e.processes import free_loopback_port
from tests.e2e.secure_port_client import secure_port_status
from tests.e2e.workload import Workload

SETTLE_S = 5.0
_STABILITY = re.compile(r"^\[(ALPHA|BETA|STABLE|INTERNAL)\]")


def scrape(port: int, cert: tuple[Path, Path]) -> str:
    tls = ssl.create_default_context()
    tls.check_hostname = False
    tls.verify_mode = ssl.CERT_NONE
    tls.load_cert_chain(*cert)
    with urllib.request.urlopen(f"https://127.0.0.1:{port}/metrics", context=tls) as response:
        return str(response.read().decode())


def families(text: str) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for family in text_string_to_metric_families(text):
        labels = sorted(
            {k for s in family.samples for k in s.labels if k not in ("le", "quantile")}
        )
        entry: dict[str, Any] = {"type": family.type, "labels": labels}
        match = _STABILITY.match(family.documentation)
        # Families from outside component-base (process_*, go_*) carry no marker.
        entry["stability"] = match.group(1) if match else None
        if family.type == "histogram":
            buckets = sorted(
                {float(s.labels["le"]) for s in family.samples if s.name.endswith("_bucket")}
            )
            entry["buckets"] = [b for b in buckets if b != float("inf")]
        name = family.name + ("_total" if family.type == "counter" else "")
        found[name] = entry
    return dict(sorted(found.items()))


def main(target: str) -> None:
    plane = ControlPlane(binaries_or_skip())
    plane.start()
    work = Path(tempfile.mkdtemp(prefix="upstream-metrics-"))
    port = free_loopback_port()
    scheduler = ManagedProcess(
        "kube-scheduler",
        [
            str(plane.binaries.kube_scheduler),
            f"--kubeconfig={plane.kubeconfig_path}",
            f"--authentication-kubeconfig={plane.kubeconfig_path}",
            f"--authorization-kubeconfig={plane.kubeconfig_path}",
            "--leader-elect=true",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
        ],
        work / "kube-scheduler.log",
    )
    try:
        scheduler.start()
        scheduler.wait_until(lambda: secure_port_status(port, "/readyz") == 200, 60, "/readyz")
        admin = plane.admin_client()
        namespace = "metrics"
        admin.post(
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        )
        workload = Workload(admin, namespace)
        workload.create_nodes(2)
        pods = workload.create_pods(["a", "b"], "default-scheduler", cpu="3")
        workload.create_pods(["too-big"], "default-scheduler", cpu="64")
        workload.wait_bound(pods, timeout_s=60)
        important = workload.pod_manifest("important", "default-scheduler", cpu="3")
        important["spec"]["priority"] = 1000
        workload.create_pod(important)
        # Without a kubelet the victim stays Terminating: wait for the preemption, not a bind.
        poll_until(
            lambda: any(p["metadata"].get("deletionTimestamp") for p in workload.pods().values()),
            "a victim preempted",
            timeout_s=60,
        )
        time.sleep(SETTLE_S)  # a script, not a test: let the failed attempt's metrics land
        text = scrape(port, plane.admin_cert_paths)
    finally:
        scheduler.stop()
        plane.stop()
    header = (
        "# Metric families of kube-scheduler v1.36.3's /metrics after scheduling a few pods,\n"
        "# written by hack/upstream_metric_families.py. Counters carry their _total suffix.\n"
    )
    Path(target).write_text(header + yaml.safe_dump(families(text), sort_keys=False))


if __name__ == "__main__":
    main(sys.argv[1])
