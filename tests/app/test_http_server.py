"""The secure port over real HTTPS on 127.0.0.1, port chosen by the kernel."""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from scheduler.app.health_checks import scheduler_checks
from scheduler.app.http_server import HealthServer
from scheduler.app.serving_cert import generate_self_signed
from scheduler.observability import SchedulerMetrics

NOT_FOUND = "404 page not found\n"
CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "parallelism": 16,
    "leaderElection": {"leaderElect": True, "resourceName": "kube-scheduler"},
}


@dataclass
class Flags:
    synced: bool = False
    shutting_down: bool = False
    leader_ok: bool | str = True
    configz_calls: list[int] = field(default_factory=list)
    # None: a replica that does not lead.
    resource_metrics: bytes | None = None


@dataclass
class Running:
    server: HealthServer
    base: str
    client: aiohttp.ClientSession
    flags: Flags
    metrics: SchedulerMetrics

    async def get(self, path: str) -> tuple[int, str, dict[str, str]]:
        return await self.call("GET", path)

    async def call(self, method: str, path: str) -> tuple[int, str, dict[str, str]]:
        async with self.client.request(method, self.base + path) as response:
            return response.status, await response.text(), dict(response.headers)


def trusting(ca_pem: bytes) -> ssl.SSLContext:
    return ssl.create_default_context(cadata=ca_pem.decode())


@pytest.fixture
async def running() -> AsyncIterator[Running]:
    flags = Flags()
    metrics = SchedulerMetrics()
    healthz, readiness = scheduler_checks(
        handlers_synced=lambda: flags.synced,
        shutting_down=lambda: flags.shutting_down,
        leader_election=lambda: flags.leader_ok,
    )

    def configz() -> dict[str, Any]:
        flags.configz_calls.append(1)
        return CONFIG

    server = HealthServer(
        metrics,
        healthz=healthz,
        readiness=readiness,
        configz=configz,
        resource_metrics=lambda: flags.resource_metrics,
    )
    port = await server.start("127.0.0.1", 0)
    assert port > 0
    assert server.self_signed_ca_pem is not None
    # Verification stays on: the client trusts the generated CA and checks the IP SAN.
    connector = aiohttp.TCPConnector(ssl=trusting(server.self_signed_ca_pem))
    async with aiohttp.ClientSession(connector=connector) as client:
        yield Running(server, f"https://127.0.0.1:{port}", client, flags, metrics)
    await server.stop()


@pytest.mark.parametrize(
    ("path", "status", "body"),
    [
        pytest.param("/healthz", 200, "ok", id="healthz"),
        pytest.param("/livez", 200, "ok", id="livez"),
        pytest.param("/livez/ping", 200, "ok", id="livez-ping"),
        pytest.param("/healthz/leaderElection", 200, "ok", id="healthz-one-check"),
        pytest.param("/readyz/shutdown", 200, "ok", id="readyz-one-check"),
        pytest.param(
            "/healthz?verbose",
            200,
            "[+]leaderElection ok\nhealthz check passed\n",
            id="healthz-runs-the-watchdog-alone",
        ),
        pytest.param(
            "/livez?verbose", 200, "[+]ping ok\nlivez check passed\n", id="livez-pings-only"
        ),
        pytest.param("/livez/leaderElection", 404, NOT_FOUND, id="no-watchdog-in-livez"),
        pytest.param("/healthz/ping", 404, NOT_FOUND, id="no-ping-in-healthz"),
        pytest.param(
            "/readyz",
            500,
            "[+]leaderElection ok\n[+]shutdown ok\n"
            "[-]sched-handler-sync failed: reason withheld\nreadyz check failed\n",
            id="readyz-before-sync",
        ),
        pytest.param(
            "/readyz/sched-handler-sync",
            500,
            "internal server error: handlers are not fully synchronized\n",
            id="sync-check-shows-its-reason",
        ),
        pytest.param("/readyz/nope", 404, NOT_FOUND, id="unknown-check"),
        pytest.param("/readyz/ping", 404, NOT_FOUND, id="no-ping-in-readyz"),
        pytest.param(
            "/readyz?exclude=sched-handler-sync&verbose=1",
            200,
            "[+]leaderElection ok\n[+]shutdown ok\n[+]sched-handler-sync excluded: ok\n"
            "readyz check passed\n",
            id="excluded-failing-check",
        ),
        pytest.param(
            "/healthz?verbose&exclude=zz&exclude=aa&exclude=ping",
            200,
            "[+]leaderElection ok\n"
            'warn: some health checks cannot be excluded: no matches for "aa","ping","zz"\n'
            "healthz check passed\n",
            id="unmatched-exclusions-sorted",
        ),
    ],
)
async def test_health_endpoints(running: Running, path: str, status: int, body: str) -> None:
    got_status, got_body, headers = await running.get(path)
    assert (got_status, got_body) == (status, body)
    assert headers["Content-Type"] == "text/plain; charset=utf-8"
    # Upstream writes a single check's "ok" bare; everything else here is nosniff.
    bare = "/" in path[1:] and status == 200
    assert headers.get("X-Content-Type-Options") == (None if bare else "nosniff")
    assert headers["Cache-Control"] == "no-cache, private"


async def test_readiness_follows_the_handler_sync_and_shutdown(running: Running) -> None:
    assert (await running.get("/readyz"))[0] == 500
    running.flags.synced = True
    assert (await running.get("/readyz"))[:2] == (200, "ok")
    assert (await running.get("/readyz?verbose"))[1] == (
        "[+]leaderElection ok\n[+]shutdown ok\n[+]sched-handler-sync ok\nreadyz check passed\n"
    )
    running.flags.shutting_down = True
    status, body, _ = await running.get("/readyz")
    assert status == 500
    assert "[-]shutdown failed: reason withheld\n" in body
    assert (await running.get("/readyz/shutdown"))[1] == (
        "internal server error: process is shutting down\n"
    )
    # Liveness does not care about either.
    assert (await running.get("/livez"))[:2] == (200, "ok")
    assert (await running.get("/healthz"))[:2] == (200, "ok")


async def test_a_failing_leader_election_watchdog_fails_healthz_not_livez(
    running: Running,
) -> None:
    running.flags.leader_ok = "failed election to renew leadership on lease kube-scheduler"
    status, body, _ = await running.get("/healthz")
    assert (status, body) == (
        500,
        "[-]leaderElection failed: reason withheld\nhealthz check failed\n",
    )
    assert (await running.get("/healthz/leaderElection"))[:2] == (
        500,
        "internal server error: failed election to renew leadership on lease kube-scheduler\n",
    )
    assert (await running.get("/livez"))[:2] == (200, "ok")


async def test_metrics_are_prometheus_text(running: Running) -> None:
    running.metrics.leader_status("kube-scheduler", True)
    running.metrics.schedule_attempt("scheduled", "default-scheduler", 0.01)
    status, body, headers = await running.get("/metrics")
    assert status == 200
    assert headers["Content-Type"] == SchedulerMetrics.CONTENT_TYPE
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    lines = body.splitlines()
    assert 'leader_election_master_status{name="kube-scheduler"} 1.0' in lines
    assert (
        'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1.0'
        in lines
    )


async def test_resource_metrics_are_served_when_rendered_and_empty_otherwise(
    running: Running,
) -> None:
    # A replica that does not lead renders nothing: 200 with an empty body, as upstream.
    status, body, _ = await running.get("/metrics/resources")
    assert (status, body) == (200, "")
    assert (await running.call("DELETE", "/metrics/resources"))[:2] == (200, "")
    sample = 'kube_pod_resource_request{namespace="a",pod="p",resource="cpu"} 0.5\n'
    running.flags.resource_metrics = sample.encode()
    status, body, headers = await running.get("/metrics/resources")
    assert (status, body) == (200, sample)
    assert headers["Content-Type"] == SchedulerMetrics.CONTENT_TYPE


async def test_health_check_outcomes_are_served_as_slis(running: Running) -> None:
    await running.get("/readyz")
    await running.get("/readyz/shutdown")  # one check alone records nothing, as upstream
    status, body, headers = await running.get("/metrics/slis")
    assert status == 200
    assert headers["Content-Type"] == SchedulerMetrics.CONTENT_TYPE
    lines = body.splitlines()
    # Not synced yet: the sync check failed, the others passed.
    assert 'kubernetes_healthcheck{name="sched-handler-sync",type="readyz"} 0.0' in lines
    assert 'kubernetes_healthcheck{name="shutdown",type="readyz"} 1.0' in lines
    total = 'kubernetes_healthchecks_total{name="shutdown",status="success",type="readyz"} 1.0'
    assert total in lines


async def test_delete_resets_the_metrics_as_upstreams_handler_does(running: Running) -> None:
    running.metrics.schedule_attempt("scheduled", "default-scheduler", 0.01)
    running.flags.resource_metrics = b""  # leading, no pods
    await running.get("/readyz")
    for path in ("/metrics", "/metrics/slis", "/metrics/resources"):
        status, body, headers = await running.call("DELETE", path)
        assert (status, body) == (200, "metrics reset\n")
        assert headers["Content-Type"] == "text/plain; charset=utf-8"
        assert "X-Content-Type-Options" not in headers  # written bare, as Go's handler does
    _, body, _ = await running.get("/metrics")
    assert "scheduler_schedule_attempts_total{" not in body
    _, slis, _ = await running.get("/metrics/slis")
    assert "kubernetes_healthcheck{" not in slis


async def test_configz_is_the_effective_config_under_componentconfig(running: Running) -> None:
    status, body, headers = await running.get("/configz")
    assert status == 200
    assert (headers["Content-Type"], headers["X-Content-Type-Options"]) == (
        "application/json",
        "nosniff",
    )
    assert json.loads(body) == {"componentconfig": CONFIG}
    assert body == json.dumps({"componentconfig": CONFIG}, separators=(",", ":"))
    await running.get("/configz")
    assert len(running.flags.configz_calls) == 2  # read on each request, never cached


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "OPTIONS"])
@pytest.mark.parametrize(
    "path", ["/healthz", "/livez", "/readyz/shutdown", "/configz", "/metrics", "/metrics/slis"]
)
async def test_any_method_is_served_as_upstreams_mux_serves_it(
    running: Running, method: str, path: str
) -> None:
    running.flags.synced = True
    status, body, headers = await running.call(method, path)
    assert status == 200
    if path.startswith("/metrics"):
        # Read, not reset: only DELETE resets.
        assert headers["Content-Type"] == SchedulerMetrics.CONTENT_TYPE
    else:
        assert body == (await running.get(path))[1]


async def test_head_answers_the_headers_of_get(running: Running) -> None:
    status, body, headers = await running.call("HEAD", "/healthz")
    assert (status, body, headers["Content-Type"]) == (200, "", "text/plain; charset=utf-8")
    assert headers["Content-Length"] == "2"


@pytest.mark.parametrize(
    "path", ["/nope", "/healthz/", "/healthz/leaderElection/x", "/metrics/nope", "/debug/pprof/"]
)
@pytest.mark.parametrize("method", ["GET", "POST"])
async def test_unknown_paths_answer_as_gos_not_found_handler(
    running: Running, path: str, method: str
) -> None:
    status, body, headers = await running.call(method, path)
    assert (status, body) == (404, NOT_FOUND)
    assert headers["Content-Type"] == "text/plain; charset=utf-8"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Cache-Control"] == "no-cache, private"


@pytest.mark.parametrize("path", ["/healthz", "/metrics", "/metrics/slis", "/configz"])
async def test_no_answer_may_be_cached(running: Running, path: str) -> None:
    assert (await running.get(path))[2]["Cache-Control"] == "no-cache, private"


async def test_plain_http_is_not_served(running: Running) -> None:
    plain = running.base.replace("https://", "http://")
    async with aiohttp.ClientSession() as client:
        with pytest.raises(aiohttp.ClientError):
            async with client.get(plain + "/healthz") as response:
                await response.text()


async def test_an_untrusting_client_rejects_the_self_signed_certificate(running: Running) -> None:
    async with aiohttp.ClientSession() as client:
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await client.get(running.base + "/healthz")


async def test_serves_given_certificate_files_and_stops(tmp_path: Path) -> None:
    pair = generate_self_signed("127.0.0.1", datetime.now(UTC))
    cert_file, key_file = tmp_path / "tls.crt", tmp_path / "tls.key"
    cert_file.write_bytes(pair.cert_chain_pem)
    key_file.write_bytes(pair.key_pem)
    server = HealthServer(
        SchedulerMetrics(),
        healthz={},
        readiness={},
        configz=dict,
        tls_cert_file=str(cert_file),
        tls_private_key_file=str(key_file),
    )
    port = await server.start("127.0.0.1", 0)
    assert server.self_signed_ca_pem is None
    url = f"https://127.0.0.1:{port}"
    connector = aiohttp.TCPConnector(ssl=trusting(pair.ca_pem))
    async with aiohttp.ClientSession(connector=connector) as client:
        async with client.get(url + "/readyz?verbose") as response:
            # With no checks given, an endpoint serves the ping check.
            assert (response.status, await response.text()) == (
                200,
                "[+]ping ok\nreadyz check passed\n",
            )
        async with client.get(url + "/configz") as response:
            assert await response.json() == {"componentconfig": {}}
        await server.stop()
        with pytest.raises(aiohttp.ClientConnectorError):
            await client.get(url + "/healthz")
    await server.stop()  # stopping twice is harmless


def test_certificate_files_come_in_pairs() -> None:
    with pytest.raises(ValueError, match="together"):
        HealthServer(
            SchedulerMetrics(), healthz={}, readiness={}, configz=dict, tls_cert_file="x.crt"
        )


def _free_port_on_both_families() -> int:
    """A port free on IPv4 and IPv6 alike, as a dual-stack socket finds one."""
    with socket.create_server(("", 0), family=socket.AF_INET6, dualstack_ipv6=True) as probe:
        port: int = probe.getsockname()[1]
        return port


@pytest.mark.skipif(not socket.has_dualstack_ipv6(), reason="no IPv6 on this host")
@pytest.mark.parametrize("bind_address", ["0.0.0.0", "::", ""])
async def test_a_wildcard_bind_address_listens_on_both_ip_families(bind_address: str) -> None:
    server = HealthServer(SchedulerMetrics(), healthz={}, readiness={}, configz=dict)
    port = await server.start(bind_address, _free_port_on_both_families())
    try:
        for loopback in ("127.0.0.1", "::1"):
            _, writer = await asyncio.open_connection(loopback, port)
            writer.close()
            await writer.wait_closed()
    finally:
        await server.stop()
