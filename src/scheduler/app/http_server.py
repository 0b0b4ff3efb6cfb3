"""The secure port: health, metrics and configz over HTTPS.

Serves `/healthz`, `/livez` and `/readyz` (each also per check, `/readyz/<name>`, and with
`?verbose` / `?exclude=`), `/metrics`, `/metrics/resources` and `/metrics/slis` (the health
checks' outcomes) in Prometheus text format and `/configz` as `{"componentconfig": ...}`. As
kube-scheduler, it serves HTTPS only: with the given certificate files, or else a self-signed
certificate generated at start-up (see `serving_cert`). Non-leader replicas serve it too.

With an `AccessGuard`, every request is authenticated and authorized first (see
`scheduler.app.access`); the handshake then asks for a client certificate from the trusted CAs.
Python's ssl module cannot request a certificate without verifying it, so a certificate from
an untrusted CA fails the handshake, where kube-scheduler completes it and answers 401.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from scheduler.app.access.guard import AccessGuard
from scheduler.app.debug_endpoints import add_debug_routes
from scheduler.app.healthz import PING
from scheduler.app.healthz import Answer
from scheduler.app.healthz import HealthCheck
from scheduler.app.healthz import check_answer
from scheduler.app.healthz import endpoint_answer
from scheduler.app.serving_cert import cert_dir_pair
from scheduler.app.serving_cert import generate_self_signed
from scheduler.app.serving_cert import server_context_from_files
from scheduler.app.serving_cert import server_context_from_pem
from scheduler.app.tls_options import TLSOptions
from scheduler.app.zpages import ZPages
from scheduler.framework.clock import Clock
from scheduler.framework.clock import SystemClock
from scheduler.observability import SchedulerMetrics
from scheduler.observability.health_slis import HealthCheckSLIs

_Handler = Callable[[web.Request], Awaitable[web.Response]]
_TEXT_HEADERS = {"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"}


class HealthServer:
    """Health, metrics and configz endpoints on one HTTPS port.

    `liveness` serves `/healthz` and `/livez`, `readiness` `/readyz`; an empty set serves the
    `ping` check. Checks run on every request, so they must be cheap and must not block.
    `configz` returns the effective configuration as JSON-ready data; it is served wrapped
    in `{"componentconfig": ...}`, the name kube-scheduler registers it under.
    `resource_metrics` renders `/metrics/resources`; like kube-scheduler's, a replica that
    does not lead answers it with an empty body, so it returns b"" there. `profiling`
    (`enableProfiling`) adds the debugging paths of `debug_endpoints`, `zpages` `/statusz`
    and `/flagz`.
    """

    def __init__(
        self,
        metrics: SchedulerMetrics,
        *,
        liveness: Mapping[str, HealthCheck],
        readiness: Mapping[str, HealthCheck],
        configz: Callable[[], Mapping[str, Any]],
        resource_metrics: Callable[[], bytes] = lambda: b"",
        profiling: bool = False,
        zpages: ZPages | None = None,
        tls_cert_file: str | None = None,
        tls_private_key_file: str | None = None,
        clock: Clock | None = None,
        guard: AccessGuard | None = None,
        client_ca_pem: bytes = b"",
        tls_options: TLSOptions | None = None,
        cert_dir: str = "",
        reuse_address: bool = False,
        reuse_port: bool = False,
    ) -> None:
        if (tls_cert_file is None) != (tls_private_key_file is None):
            raise ValueError("tls_cert_file and tls_private_key_file must be given together")
        self._metrics = metrics
        self._endpoints: dict[str, Mapping[str, HealthCheck]] = {
            "healthz": dict(liveness) or PING,
            "livez": dict(liveness) or PING,
            "readyz": dict(readiness) or PING,
        }
        self._configz = configz
        self._resource_metrics = resource_metrics
        self._slis = HealthCheckSLIs()
        self._profiling = profiling
        self._zpages = zpages
        self._tls_files = (
            (tls_cert_file, tls_private_key_file)
            if tls_cert_file is not None and tls_private_key_file is not None
            else None
        )
        self._clock = clock if clock is not None else SystemClock()
        self._runner: web.AppRunner | None = None
        self._ca_pem: bytes | None = None
        self._guard = guard
        if guard is not None:
            guard.observe(metrics.secure_port, self._clock)
        self._client_ca_pem = client_ca_pem
        self._tls_options = tls_options if tls_options is not None else TLSOptions()
        self._cert_dir = cert_dir
        # --permit-address-sharing / --permit-port-sharing; None leaves the OS default.
        self._reuse = (reuse_address or None, reuse_port or None)

    @property
    def self_signed_ca_pem(self) -> bytes | None:
        """The CA of the generated certificate (None when serving given files), for a client
        that wants to verify the server."""
        return self._ca_pem

    async def start(self, host: str, port: int) -> int:
        """Listen on `host`:`port` (0 picks a free port) and return the port bound."""
        if self._runner is not None:
            raise RuntimeError("the server is already running")
        context = self._ssl_context(host)
        runner = web.AppRunner(self._application(), access_log=None)
        await runner.setup()
        try:
            site = web.TCPSite(
                runner,
                host,
                port,
                ssl_context=context,
                reuse_address=self._reuse[0],
                reuse_port=self._reuse[1],
            )
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        # A host name may bind several sockets; with port 0 each gets its own, take the first.
        return int(runner.addresses[0][1])

    async def stop(self) -> None:
        """Stop listening and close open connections; a no-op if not running."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    # -- wiring --------------------------------------------------------------------------------

    def _ssl_context(self, host: str) -> ssl.SSLContext:
        context = self._serving_context(host)
        self._tls_options.apply(context)
        if self._client_ca_pem:
            context.verify_mode = ssl.CERT_OPTIONAL
            context.load_verify_locations(cadata=self._client_ca_pem.decode())
        return context

    def _serving_context(self, host: str) -> ssl.SSLContext:
        if self._tls_files is not None:
            return server_context_from_files(*self._tls_files)
        if self._cert_dir:
            return server_context_from_files(
                *cert_dir_pair(self._cert_dir, host, self._clock.wall())
            )
        generated = generate_self_signed(host, self._clock.wall())
        self._ca_pem = generated.ca_pem
        return server_context_from_pem(generated.cert_chain_pem, generated.key_pem)

    def _application(self) -> web.Application:
        app = web.Application(middlewares=[self._guard.middleware] if self._guard else [])
        for endpoint in self._endpoints:
            app.router.add_get(f"/{endpoint}", self._endpoint_handler(endpoint))
            app.router.add_get(f"/{endpoint}/{{check}}", self._check_handler(endpoint))
        app.router.add_get("/metrics", self._serve_metrics)
        app.router.add_delete("/metrics", self._reset_metrics)
        app.router.add_get("/metrics/resources", self._serve_resource_metrics)
        app.router.add_get("/metrics/slis", self._serve_slis)
        app.router.add_delete("/metrics/slis", self._reset_slis)
        app.router.add_get("/configz", self._serve_configz)
        if self._profiling:
            add_debug_routes(app)
        if self._zpages is not None:
            self._zpages.add_routes(app)
        return app

    def _endpoint_handler(self, endpoint: str) -> _Handler:
        async def handle(request: web.Request) -> web.Response:
            answer = endpoint_answer(
                endpoint,
                self._endpoints[endpoint],
                verbose="verbose" in request.query,
                exclude=request.query.getall("exclude", []),
                observe=self._slis.observe,
            )
            return _text(answer)

        return handle

    def _check_handler(self, endpoint: str) -> _Handler:
        async def handle(request: web.Request) -> web.Response:
            check = self._endpoints[endpoint].get(request.match_info["check"])
            if check is None:
                return _text(Answer(404, "404 page not found\n"))
            return _text(check_answer(check))

        return handle

    async def _serve_metrics(self, _: web.Request) -> web.Response:
        return web.Response(
            body=self._metrics.render(), headers={"Content-Type": SchedulerMetrics.CONTENT_TYPE}
        )

    async def _serve_resource_metrics(self, _: web.Request) -> web.Response:
        body = self._resource_metrics()
        if not body:
            return web.Response()
        return web.Response(body=body, headers={"Content-Type": SchedulerMetrics.CONTENT_TYPE})

    async def _reset_metrics(self, _: web.Request) -> web.Response:
        # kube-scheduler's /metrics answers DELETE so: load-testing tools (clusterloader2)
        # reset the scheduler's counters before a measurement.
        self._metrics.reset()
        return _text(Answer(200, "metrics reset\n"))

    async def _reset_slis(self, _: web.Request) -> web.Response:
        self._slis.reset()
        return _text(Answer(200, "metrics reset\n"))

    async def _serve_slis(self, _: web.Request) -> web.Response:
        return web.Response(
            body=self._slis.render(), headers={"Content-Type": SchedulerMetrics.CONTENT_TYPE}
        )

    async def _serve_configz(self, _: web.Request) -> web.Response:
        body = json.dumps({"componentconfig": self._configz()}, indent=None)
        return web.Response(text=body, content_type="application/json")


def _text(answer: Answer) -> web.Response:
    return web.Response(status=answer.status, text=answer.text, headers=_TEXT_HEADERS)
