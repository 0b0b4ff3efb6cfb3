"""The daemon's secure port: upstream's metric names with counts that match the run, and a
/readyz that stays failing until the informers have synced."""

from __future__ import annotations

import signal
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import LeaderElection
from tests.e2e.daemon import Metrics
from tests.e2e.daemon import poll_until
from tests.e2e.processes import free_loopback_port
from tests.e2e.secure_port_client import secure_port_call
from tests.e2e.tcp_proxy import TcpProxy
from tests.e2e.workload import Workload
from tests.e2e.workload import pod_scheduled_condition
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

BIND_TIMEOUT_S = 60.0
EVENT_TIMEOUT_S = 30.0
# The informers retry an unreachable server with a backoff capped at 30 s.
SYNC_TIMEOUT_S = 60.0

UPSTREAM_NAMES = {
    "scheduler_schedule_attempts_total",
    "scheduler_pending_pods",
    "scheduler_queue_incoming_pods_total",
    "scheduler_framework_extension_point_duration_seconds_count",
    "scheduler_pod_scheduling_sli_duration_seconds_count",
    "leader_election_master_status",
}


def test_metrics_use_upstream_names_and_count_the_run(
    daemons: DaemonLauncher, workload: Workload, namespace: str
) -> None:
    ours = unique("sched")
    election = LeaderElection(namespace, unique("lease"))
    workload.create_nodes(3, cpu="2")
    daemon = daemons.start(ours, leader_election=election)
    pods = workload.create_pods([f"p{i:02}" for i in range(30)], ours)
    [too_big] = workload.create_pods(["too-big"], ours, cpu="8")
    workload.wait_bound(pods, timeout_s=BIND_TIMEOUT_S)
    workload.wait_events("Scheduled", pods, timeout_s=EVENT_TIMEOUT_S)

    def quiet() -> Metrics | None:
        """A scrape once every pod is either bound or parked as unschedulable."""
        metrics = daemon.metrics()
        parked = metrics.total("scheduler_pending_pods", queue="unschedulable") + metrics.total(
            "scheduler_pending_pods", queue="backoff"
        )
        bound = metrics.total("scheduler_schedule_attempts_total", result="scheduled")
        rejected = pod_scheduled_condition(workload.pods()[too_big])
        settled = bound == len(pods) and parked == 1 and rejected is not None
        return metrics if settled else None

    metrics = poll_until(quiet, "the queue settling", timeout_s=EVENT_TIMEOUT_S)

    assert metrics.names() >= UPSTREAM_NAMES
    attempts = "scheduler_schedule_attempts_total"
    assert metrics.total(attempts, profile=ours, result="scheduled") == len(pods)
    failed_attempts = metrics.total(attempts, profile=ours, result="unschedulable")
    assert failed_attempts >= 1
    assert metrics.total(attempts, result="error") == 0
    assert metrics.total("scheduler_pending_pods", queue="active") == 0
    assert metrics.total("scheduler_pending_pods", queue="gated") == 0
    incoming = "scheduler_queue_incoming_pods_total"
    assert metrics.total(incoming, queue="active", event="UnschedulablePodAdd") == len(pods) + 1
    assert metrics.total(incoming, queue="unschedulable", event="ScheduleAttemptFailure") == (
        failed_attempts
    )
    extension_points = "scheduler_framework_extension_point_duration_seconds_count"
    # Every attempt runs PreFilter; only the bound pods reach Bind and PostBind.
    assert metrics.total(extension_points, extension_point="PreFilter", profile=ours) == (
        len(pods) + failed_attempts
    )
    for point in ("Bind", "PostBind"):
        assert metrics.total(
            extension_points, extension_point=point, profile=ours, status="Success"
        ) == len(pods), point
    # One Filter observation per attempt (the whole pass); PreEnqueue each time a pod is queued.
    assert metrics.total(extension_points, extension_point="Filter", profile=ours) == (
        len(pods) + failed_attempts
    )
    assert metrics.total(extension_points, extension_point="PreEnqueue", profile=ours) >= (
        len(pods) + 1
    )
    evaluations = "scheduler_plugin_evaluation_total"
    # NodeResourcesFit filters every node in every attempt: three nodes each time.
    assert metrics.total(
        evaluations, plugin="NodeResourcesFit", extension_point="Filter", profile=ours
    ) == 3 * (len(pods) + failed_attempts)
    # The API client's requests, and the harness's own calls to the secure port.
    assert metrics.total("rest_client_requests_total", method="POST", code="201") >= len(pods)
    assert metrics.total("rest_client_rate_limiter_duration_seconds_count", verb="GET") > 0
    assert metrics.total("authentication_attempts_total", result="success") > 0
    assert metrics.total("authorization_attempts_total", result="allowed") > 0
    assert metrics.total("kubernetes_build_info", minor="36") == 1
    assert "process_cpu_seconds_total" in metrics.names()
    sli = "scheduler_pod_scheduling_sli_duration_seconds_count"
    assert metrics.total(sli) == len(pods)
    assert metrics.total(sli, attempts="1") == len(pods)
    # Named after kube-scheduler's elector, whatever the Lease (unique to this test) is called.
    assert metrics.labelled("leader_election_master_status") == [{"name": "kube-scheduler"}]
    assert metrics.total("leader_election_master_status", name="kube-scheduler") == 1


def _kubeconfig_with_server(source: Path, server: str, target: Path) -> Path:
    config = yaml.safe_load(source.read_text())
    for cluster in config["clusters"]:
        cluster["cluster"]["server"] = server
    target.write_text(yaml.safe_dump(config))
    target.chmod(0o600)
    return target


def test_readyz_fails_until_the_informers_have_synced(
    control_plane: ControlPlane, daemons: DaemonLauncher, workload: Workload, tmp_path: Path
) -> None:
    ours = unique("sched")
    workload.create_nodes(1)
    [pod] = workload.create_pods(["waiting"], ours)
    # The daemon's server address has nothing behind it until the proxy starts listening.
    apiserver_port = urlsplit(control_plane.server_url).port
    assert apiserver_port is not None
    proxy_port = free_loopback_port()
    kubeconfig = _kubeconfig_with_server(
        control_plane.kubeconfig_path, f"https://127.0.0.1:{proxy_port}", tmp_path / "kubeconfig"
    )
    # The secure port's reviews go straight to the apiserver, so the harness can ask it.
    daemon = daemons.start(
        ours, kubeconfig=kubeconfig, review_kubeconfig=control_plane.kubeconfig_path
    )

    unsynced = daemon.get("/readyz")
    unsynced_check = daemon.get("/readyz/sched-handler-sync")
    alive = daemon.get("/healthz")
    with TcpProxy(proxy_port, apiserver_port) as proxy:
        proxy.start()
        daemon.wait_ready(SYNC_TIMEOUT_S)
        placed = workload.wait_bound([pod], timeout_s=BIND_TIMEOUT_S)
        ready = daemon.get("/readyz?verbose")
        connections = proxy.connections

    assert unsynced.status == 500
    assert "[-]sched-handler-sync failed: reason withheld" in unsynced.body
    assert "[+]shutdown ok" in unsynced.body
    assert (unsynced_check.status, unsynced_check.body) == (
        500,
        "internal server error: handlers are not fully synchronized\n",
    )
    assert (alive.status, alive.body) == (200, "ok")
    assert ready.status == 200
    assert "[+]sched-handler-sync ok" in ready.body
    assert placed == {pod: workload.nodes[0]}
    assert connections > 0


def test_put_debug_flags_v_changes_the_running_daemons_verbosity(
    control_plane: ControlPlane, daemons: DaemonLauncher, workload: Workload, namespace: str
) -> None:
    ours = unique("sched")
    workload.create_nodes(1, cpu="2")
    daemon = daemons.start(ours)  # at -v=2: a line per bound pod, none per attempt
    admin = control_plane.admin_cert_paths

    def schedule_and_log(name: str) -> set[str]:
        """Bind one pod; then the pods that have an attempt line in the log."""
        workload.create_pods([name], ours)
        workload.wait_bound([name], timeout_s=BIND_TIMEOUT_S)
        # The bind line follows the attempt line in the same stream: once it is read, an
        # attempt line written before it would have been read too.
        poll_until(
            lambda: any(
                r.get("pod") == f"{namespace}/{name}"
                for r in daemon.records("Successfully bound pod to node")
            ),
            f"the bind line of {name}",
            timeout_s=EVENT_TIMEOUT_S,
        )
        return {str(r["pod"]) for r in daemon.records("Attempting to schedule pod")}

    before = schedule_and_log("before")
    raised = secure_port_call(
        daemon.port, "/debug/flags/v", client_cert=admin, method="PUT", body=b"4"
    )
    during = schedule_and_log("during")
    lowered = secure_port_call(
        daemon.port, "/debug/flags/v", client_cert=admin, method="PUT", body=b"2"
    )
    after = schedule_and_log("after")

    assert raised == (200, "successfully set klog.logging.verbosity to 4\n")
    assert lowered == (200, "successfully set klog.logging.verbosity to 2\n")
    assert before == set()
    assert during == after == {f"{namespace}/during"}


def test_sigusr2_writes_the_cache_and_the_queue_to_the_log_and_scheduling_goes_on(
    daemons: DaemonLauncher, workload: Workload, namespace: str
) -> None:
    ours = unique("sched")
    [node] = workload.create_nodes(1, cpu="2")
    daemon = daemons.start(ours)
    placed = workload.create_pods(["a", "b"], ours)
    [too_big] = workload.create_pods(["too-big"], ours, cpu="8")
    workload.wait_bound(placed, timeout_s=BIND_TIMEOUT_S)
    poll_until(
        lambda: daemon.metrics().total("scheduler_pending_pods", queue="unschedulable") == 1,
        "too-big parked as unschedulable",
        timeout_s=EVENT_TIMEOUT_S,
    )
    uids = {name: pod["metadata"]["uid"] for name, pod in workload.pods().items()}

    daemon.send_signal(signal.SIGUSR2)
    [queue] = poll_until(
        lambda: daemon.records("Dump of scheduling queue"),
        "the dump of the queue",
        timeout_s=EVENT_TIMEOUT_S,
    )

    [nodes] = daemon.records("Dump of cached NodeInfo")
    [ours_dumped] = [n for n in str(nodes["nodes"]).split("\n\n\n") if f"Node name: {node}\n" in n]
    assert "Deleted: false\n" in ours_dumped
    assert "Scheduled Pods(number: 2):\n" in ours_dumped
    for name in placed:
        assert f"name: {name}, namespace: {namespace}, uid: {uids[name]}, " in ours_dumped
    assert queue["summary"] == "activeQ:0; backoffQ:0; unschedulablePods:1"
    assert queue["pods"] == (
        f"name: {too_big}, namespace: {namespace}, uid: {uids[too_big]}, phase: Pending, "
        "nominated node: \n"
    )
    # Pods and nodes of this run are where the informers have them; other tests' leftovers
    # (pods on nodes since deleted) may be reported, as kube-scheduler reports them.
    reported = {
        str(item)
        for record in daemon.records("Cache mismatch")
        for key, value in record.items()
        if key.endswith(("Nodes", "Pods"))
        for item in value
    }
    assert not reported & {node, *uids.values()}
    # The signal neither stops the daemon nor scheduling.
    [later] = workload.create_pods(["later"], ours)
    workload.wait_bound([later], timeout_s=BIND_TIMEOUT_S)
    assert daemon.running()
