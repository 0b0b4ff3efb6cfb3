"""Who may read /metrics: the same answers from our secure port as from kube-scheduler's.

Both schedulers run against the same apiserver with the RBAC of deploy/ (the scheduler's
ServiceAccount does their TokenReviews and SubjectAccessReviews and reads the client CA from
kube-system/extension-apiserver-authentication). Each caller then asks both for the same paths.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import yaml

from tests.deploy.manifests import DEPLOY_DIR
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import LeaderElection
from tests.e2e.daemon import Metrics
from tests.e2e.daemon import SchedulerDaemon
from tests.e2e.daemon import poll_until
from tests.e2e.manifests import apply
from tests.e2e.manifests import read_manifests
from tests.e2e.processes import free_loopback_port
from tests.e2e.secure_port_client import SecurePortAnswer
from tests.e2e.secure_port_client import secure_port_call
from tests.e2e.secure_port_client import secure_port_request
from tests.e2e.secure_port_client import secure_port_status
from tests.e2e.test_daemon_rbac import RBAC_PROPAGATION_S
from tests.e2e.test_daemon_rbac import apply_deployed_rbac
from tests.e2e.upstream_scheduler import STARTUP_S
from tests.e2e.upstream_scheduler import start_kube_scheduler
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

METRICS_READER = DEPLOY_DIR / "monitoring" / "clusterrole-metrics-reader.yaml"
# Headers both must set alike (Date, Content-Length and the like may differ).
COMPARED_HEADERS = ("Content-Type", "X-Content-Type-Options", "Cache-Control")
BIND_TIMEOUT_S = 60.0


def _bind_metrics_reader(control_plane: ControlPlane, subject: dict[str, str]) -> None:
    [role] = read_manifests(METRICS_READER)
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": f"metrics-reader-{uuid.uuid4().hex[:6]}"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": role["metadata"]["name"],
        },
        "subjects": [subject],
    }
    admin = control_plane.admin_client()
    for manifest in (role, binding):
        applied = apply(admin, manifest)
        assert applied.status in (200, 201), applied


def test_metrics_callers_get_the_same_answers_from_both_schedulers(
    e2e_binaries: ControlPlaneBinaries,
    control_plane: ControlPlane,
    daemons: DaemonLauncher,
    tmp_path: Path,
) -> None:
    admin = control_plane.admin_client()
    scheduler_token = apply_deployed_rbac(control_plane)
    reviewer = control_plane.make_user_kubeconfig(scheduler_token, user="secure-port-reviewer")

    scraper_ns = f"scrape-{uuid.uuid4().hex[:6]}"
    admin.post(
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": scraper_ns}},
    )
    _bind_metrics_reader(
        control_plane, {"kind": "ServiceAccount", "name": "prometheus", "namespace": scraper_ns}
    )
    cert_user = f"cert-scraper-{uuid.uuid4().hex[:6]}"
    _bind_metrics_reader(
        control_plane, {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": cert_user}
    )
    reader_token = control_plane.service_account_token(scraper_ns, "prometheus")
    stranger_token = control_plane.service_account_token(scraper_ns, "stranger")
    # The test plane's CA is the cluster's client CA: kube-apiserver publishes it.
    ca = control_plane.certificate_authority
    ca.issue_client(cert_user, []).write(tmp_path / "scraper.crt", tmp_path / "scraper.key")
    scraper_cert = (tmp_path / "scraper.crt", tmp_path / "scraper.key")
    reader = control_plane.token_client(reader_token)
    poll_until(
        lambda: reader.get("/metrics").status == 200,
        "the metrics-reader binding taking effect",
        timeout_s=RBAC_PROPAGATION_S,
    )

    # The harness gives our daemon its kubeconfig for the reviews as well.
    ours = daemons.start(f"sched-{uuid.uuid4().hex[:6]}", kubeconfig=reviewer)
    ours.wait_ready()
    upstream, upstream_port = start_kube_scheduler(
        e2e_binaries, control_plane, reviewer, tmp_path / "kube-scheduler.log"
    )
    try:
        upstream.wait_until(
            lambda: secure_port_status(upstream_port, "/readyz") == 200, STARTUP_S, "/readyz"
        )
        admin_cert = control_plane.admin_cert_paths
        callers: dict[str, tuple[str, str | None, tuple[Path, Path] | None]] = {
            "anonymous /metrics": ("/metrics", None, None),
            "anonymous /healthz": ("/healthz", None, None),
            "anonymous /readyz": ("/readyz", None, None),
            "invalid token": ("/metrics", "not-a-token", None),
            "token without the right": ("/metrics", stranger_token, None),
            "metrics-reader token": ("/metrics", reader_token, None),
            "metrics-reader token, /configz": ("/configz", reader_token, None),
            "metrics-reader token, /metrics/resources": ("/metrics/resources", reader_token, None),
            "anonymous /metrics/resources": ("/metrics/resources", None, None),
            "metrics-reader token, /metrics/slis": ("/metrics/slis", reader_token, None),
            "client certificate": ("/metrics", None, scraper_cert),
            "admin certificate": ("/configz", None, admin_cert),
        }
        seen = {
            caller: tuple(
                secure_port_status(port, path, token=token, client_cert=cert)
                for port in (ours.port, upstream_port)
            )
            for caller, (path, token, cert) in callers.items()
        }
        # The debugging paths of enableProfiling (on by default): who may change the
        # verbosity, and what either port answers.
        debug_calls = {
            "admin PUT /debug/flags/v": ("PUT", "/debug/flags/v", None, admin_cert, b"3"),
            "admin GET /debug/flags/v": ("GET", "/debug/flags/v", None, admin_cert, None),
            "metrics-reader PUT /debug/flags/v": (
                "PUT",
                "/debug/flags/v",
                reader_token,
                None,
                b"3",
            ),
            "metrics-reader GET /debug/pprof/": ("GET", "/debug/pprof/", reader_token, None, None),
            # Load-testing tools reset the counters before a measurement.
            "admin DELETE /metrics": ("DELETE", "/metrics", None, admin_cert, None),
            "metrics-reader DELETE /metrics": ("DELETE", "/metrics", reader_token, None, None),
        }
        debug_seen = {
            caller: tuple(
                secure_port_call(port, path, token=token, client_cert=cert, method=verb, body=data)
                for port in (ours.port, upstream_port)
            )
            for caller, (verb, path, token, cert, data) in debug_calls.items()
        }
        index = {
            port: secure_port_call(port, "/debug/pprof/", client_cert=admin_cert)[0]
            for port in (ours.port, upstream_port)
        }
        refusals = {
            caller: tuple(
                _comparable(secure_port_request(port, path, token=token, client_cert=cert))
                for port in (ours.port, upstream_port)
            )
            for caller, (path, token, cert) in callers.items()
            if caller in ("invalid token", "token without the right")
        }
        # Both have run their health checks for the callers above: the same checks, recorded.
        slis = [
            _last_health_outcomes(secure_port_call(port, "/metrics/slis", client_cert=admin_cert))
            for port in (ours.port, upstream_port)
        ]
    finally:
        upstream.stop()

    ours_codes = {caller: codes[0] for caller, codes in seen.items()}
    upstream_codes = {caller: codes[1] for caller, codes in seen.items()}
    assert ours_codes == upstream_codes
    assert upstream_codes == {
        "anonymous /metrics": 403,
        "anonymous /healthz": 200,
        "anonymous /readyz": 200,
        "invalid token": 401,
        "token without the right": 403,
        "metrics-reader token": 200,
        "metrics-reader token, /configz": 403,
        "metrics-reader token, /metrics/resources": 200,
        "anonymous /metrics/resources": 403,
        "metrics-reader token, /metrics/slis": 200,
        "client certificate": 200,
        "admin certificate": 200,
    }
    # Same status and text from both, but for the 403's message, which names the caller.
    for caller, (mine, theirs) in debug_seen.items():
        assert mine[0] == theirs[0], caller
    assert debug_seen["admin PUT /debug/flags/v"][0] == (
        200,
        "successfully set klog.logging.verbosity to 3\n",
    )
    assert debug_seen["admin PUT /debug/flags/v"][1] == debug_seen["admin PUT /debug/flags/v"][0]
    assert debug_seen["admin GET /debug/flags/v"] == ((406, "unsupported http method\n"),) * 2
    assert debug_seen["metrics-reader PUT /debug/flags/v"][0][0] == 403
    assert debug_seen["metrics-reader GET /debug/pprof/"][0][0] == 403
    assert debug_seen["admin DELETE /metrics"] == ((200, "metrics reset\n"),) * 2
    assert debug_seen["metrics-reader DELETE /metrics"][0][0] == 403
    assert index == {ours.port: 200, upstream_port: 200}
    # The same refusals, byte for byte and header for header.
    for caller in ("invalid token", "token without the right"):
        assert refusals[caller][0] == refusals[caller][1], caller
    # The same health checks ran: no check of our own.
    assert slis[0] == slis[1]
    assert {("healthz", "ping"), ("readyz", "sched-handler-sync")} <= set(slis[0])
    assert set(slis[0].values()) == {1.0}


def _last_health_outcomes(answer: tuple[int, str]) -> dict[tuple[str, str], float]:
    """(endpoint, check) -> kubernetes_healthcheck, for the health endpoints the callers used."""
    status, body = answer
    assert status == 200, answer
    return {
        (labels["type"], labels["name"]): value
        for name, labels, value in Metrics(body).samples
        if name == "kubernetes_healthcheck" and labels["type"] in ("healthz", "readyz")
    }


def _comparable(answer: SecurePortAnswer) -> tuple[int, str, dict[str, str | None]]:
    return answer.status, answer.body, {h: answer.headers.get(h) for h in COMPARED_HEADERS}


def _kubeconfig_to_nowhere(source: Path, target: Path) -> Path:
    """`source` with its server moved to a loopback port nothing listens on."""
    config = yaml.safe_load(source.read_text())
    for cluster in config["clusters"]:
        cluster["cluster"]["server"] = f"https://127.0.0.1:{free_loopback_port()}"
    target.write_text(yaml.safe_dump(config))
    target.chmod(0o600)
    return target


# (method, path, who): the admin certificate, anonymous, or an invalid token.
HEALTH_AND_MUX_CALLS = [
    ("GET", "/healthz?verbose", "admin"),
    ("GET", "/livez?verbose", "admin"),
    ("GET", "/readyz?verbose", "admin"),
    ("GET", "/healthz/leaderElection", "admin"),
    ("GET", "/livez/leaderElection", "admin"),
    ("GET", "/healthz/ping", "admin"),
    ("GET", "/livez/ping", "admin"),
    ("GET", "/readyz/sched-handler-sync", "admin"),
    ("GET", "/healthz?verbose&exclude=zz&exclude=aa&exclude=ping", "admin"),
    ("GET", "/nope", "admin"),
    ("GET", "/metrics/nope", "admin"),
    ("GET", "/healthz/", "admin"),
    ("POST", "/healthz", "admin"),
    ("PUT", "/livez", "admin"),
    ("PATCH", "/readyz", "admin"),
    ("DELETE", "/healthz/leaderElection", "admin"),
    ("HEAD", "/livez", "admin"),
    ("POST", "/nope", "admin"),
    ("DELETE", "/metrics/slis", "admin"),
    ("DELETE", "/metrics/resources", "admin"),
    ("GET", "/healthz", "anonymous"),
    ("POST", "/readyz", "anonymous"),
    ("GET", "/metrics", "invalid token"),
]


def test_health_paths_methods_and_failed_reviews_answer_as_kube_schedulers(
    e2e_binaries: ControlPlaneBinaries,
    control_plane: ControlPlane,
    daemons: DaemonLauncher,
    namespace: str,
    tmp_path: Path,
) -> None:
    """Both with leader election on, and their SubjectAccessReviews sent where nothing
    listens (the admin certificate and the health paths need none)."""
    nowhere = _kubeconfig_to_nowhere(control_plane.kubeconfig_path, tmp_path / "nowhere")
    ours = daemons.start(
        unique("sched"),
        leader_election=LeaderElection(namespace, unique("ours")),
        extra_args=[f"--authorization-kubeconfig={nowhere}"],
    )
    ours.wait_ready()
    upstream, upstream_port = start_kube_scheduler(
        e2e_binaries,
        control_plane,
        control_plane.kubeconfig_path,
        tmp_path / "kube-scheduler.log",
        extra_args=[
            "--leader-elect=true",
            f"--leader-elect-resource-namespace={namespace}",
            f"--leader-elect-resource-name={unique('theirs')}",
            f"--authorization-kubeconfig={nowhere}",
        ],
    )
    admin_cert = control_plane.admin_cert_paths

    def call(port: int, method: str, path: str, who: str) -> SecurePortAnswer:
        return secure_port_request(
            port,
            path,
            method=method,
            client_cert=admin_cert if who == "admin" else None,
            token="not-a-token" if who == "invalid token" else None,
        )

    try:
        upstream.wait_until(
            lambda: secure_port_status(upstream_port, "/readyz") == 200, STARTUP_S, "/readyz"
        )
        answers = {
            (method, path, who): tuple(
                _comparable(call(port, method, path, who)) for port in (ours.port, upstream_port)
            )
            for method, path, who in HEALTH_AND_MUX_CALLS
        }
        # A review that cannot be made: the same line up to the error, which names the
        # clients' own words for the refused connection.
        failed = [
            secure_port_request(port, "/metrics?x=1&y=%3Ca%3E")
            for port in (ours.port, upstream_port)
        ]
    finally:
        upstream.stop()

    differing = {asked: pair for asked, pair in answers.items() if pair[0] != pair[1]}
    assert differing == {}
    assert answers[("GET", "/livez/leaderElection", "admin")][0][:2] == (
        404,
        "404 page not found\n",
    )
    assert answers[("GET", "/healthz?verbose", "admin")][0][1] == (
        "[+]leaderElection ok\nhealthz check passed\n"
    )
    prefix = 'Internal Server Error: "/metrics?x=1&amp;y=%3Ca%3E": '
    for answer in failed:
        assert answer.status == 500
        assert answer.body.startswith(prefix) and answer.body.endswith("\n"), answer.body
        assert {h: answer.headers.get(h) for h in COMPARED_HEADERS} == {
            "Content-Type": "text/plain; charset=utf-8",
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-cache, private",
        }


def test_with_the_secure_port_off_the_daemon_schedules_and_serves_nothing(
    control_plane: ControlPlane, daemons: DaemonLauncher, workload: Workload
) -> None:
    ours = unique("sched")
    workload.create_nodes(1)
    [pod] = workload.create_pods(["p"], ours)
    # Serving flags kube-scheduler would refuse on a port that is on: with none, it never
    # reads them, and neither do we.
    unread = ["--tls-min-version=VersionTLS99", "--authentication-kubeconfig=/nonexistent"]
    argv = daemons.argv(ours, 0, extra_args=unread)
    daemon = SchedulerDaemon("port-off", argv, daemons.log_dir, 0)
    daemons.started.append(daemon)
    daemon.start()

    placed = workload.wait_bound([pod], timeout_s=BIND_TIMEOUT_S)

    daemon.require_running("after binding")
    assert placed == {pod: workload.nodes[0]}
    assert daemon.records(
        "secure port off (--secure-port=0): not serving health, metrics or configz"
    )
    assert daemon.records("serving health and metrics") == []
