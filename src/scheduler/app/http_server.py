"""The secure port: health, metrics and configz over HTTPS.

Serves `/healthz`, `/livez` and `/readyz` (each also per check, `/readyz/<name>`, and with
`?verbose` / `?exclude=`), `/metrics`, `/metrics/resources` and `/metrics/slis` (the health
checks' outcomes) in Prometheus text format and `/configz` as `{"componentconfig": ...}`. As
kube-scheduler, it serves HTTPS only: with the given certificate files, or else a self-signed
certificate generated at start-up (see `serving_cert`). Non-leader replicas serve it too.

As upstream's mux and handlers, no path cares about the method (`DELETE` on the metrics paths
resets them, any other method reads; only `/debug/flags/v` wants `PUT`), an unknown path gets
Go's `404 page not found`, and every answer says `Cache-Control: no-cache, private`.

With an `AccessGuard`, every request is authenticated and authorized first (see
`scheduler.app.access`); the handshake then asks for a client certificate from the trusted CAs.
Python's ssl module cannot request a certificate without verifying it, so a certificate from
an untrusted CA fails the handshake, where kube-scheduler completes it and answers 401.
"""

from __future__ import annotations

import ipaddress
import json
import ssl
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Middleware

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

_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_PLAIN_TEXT = "text/plain; charset=utf-8"
# What apiserver's WithCacheControl puts on an answer that does not say otherwise.
_NO_CACHE = "no-cache, private"
_ANY_METHOD = "*"
_NOT_FOUND = Answer(404, "404 page not found\n")
# The answer of a metrics handler's DELETE, bare as Go writes it (sniffed, not nosniff).
_METRICS_RESET = Answer(200, "metrics reset\n", nosniff=False)


class HealthServer:
    """Health, metrics and configz endpoints on one HTTPS port.

    `healthz` holds the checks of `/healthz`, `readiness` those of `/readyz`; an empty set
    serves the `ping` check. `/livez` runs `ping` only, as kube-scheduler installs it. Checks
    run on every request, so they must be cheap and must not block.
    `configz` returns the effective configuration as JSON-ready data; it is served wrapped
    in `{"componentconfig": ...}`, the name kube-scheduler registers it under.
    `resource_metrics` renders `/metrics/resources`; like kube-scheduler's, a replica that
    does not lead answers it (whatever the method) with an empty body, so it returns None
    there. `profiling` (`enableProfiling`) adds the debugging paths of `debug_endpoints`,
    `zpages` `/statusz` and `/flagz`.
    """

    def __init__(
        self,
        metrics: SchedulerMetrics,
        *,
        healthz: Mapping[str, HealthCheck],
        readiness: Mapping[str, HealthCheck],
        configz: Callable[[], Mapping[str, Any]],
        resource_metrics: Callable[[], bytes | None] = lambda: None,
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
            "healthz": dict(healthz) or PING,
            "livez": PING,
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
        """Listen on `host`:`port` (0 picks a free port) and return the port bound. A blank or
        unspecified `host` (0.0.0.0, ::) listens on every address of both IP families, as Go
        does; with port 0 each family then gets a port of its own."""
        if self._runner is not None:
            raise RuntimeError("the server is already running")
        context = self._ssl_context(host)
        runner = web.AppRunner(self._application(), access_log=None)
        await runner.setup()
        try:
            site = web.TCPSite(
                runner,
                _listening_host(host),
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
        # Outermost, so refusals by the guard and 404s get the header too.
        middlewares: list[Middleware] = [_no_cache]
        if self._guard is not None:
            middlewares.append(self._guard.middleware)
        app = web.Application(middlewares=middlewares)
        for endpoint in self._endpoints:
            app.router.add_route(_ANY_METHOD, f"/{endpoint}", self._endpoint_handler(endpoint))
            app.router.add_route(
                _ANY_METHOD, f"/{endpoint}/{{check}}", self._check_handler(endpoint)
            )
        app.router.add_route(_ANY_METHOD, "/metrics", self._metrics_handler)
        app.router.add_route(_ANY_METHOD, "/metrics/resources", self._resource_metrics_handler)
        app.router.add_route(_ANY_METHOD, "/metrics/slis", self._slis_handler)
        app.router.add_route(_ANY_METHOD, "/configz", self._serve_configz)
        if self._profiling:
            add_debug_routes(app)
        if self._zpages is not None:
            self._zpages.add_routes(app)
        # Last: aiohttp tries routes in the order they were added.
        app.router.add_route(_ANY_METHOD, "/{path:.*}", _not_found)
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
                return _text(_NOT_FOUND)
            return _text(check_answer(check))

        return handle

    async def _metrics_handler(self, request: web.Request) -> web.Response:
        # kube-scheduler's /metrics answers DELETE so: load-testing tools (clusterloader2)
        # reset the scheduler's counters before a measurement.
        return _reset_or_render(request, self._metrics.reset, self._metrics.render)

    async def _resource_metrics_handler(self, request: web.Request) -> web.Response:
        body = self._resource_metrics()
        if body is None:
            return web.Response()
        # Its series are computed from the informers at each scrape: nothing to reset.
        if request.method == "DELETE":
            return _text(_METRICS_RESET)
        return _prometheus(body)

    async def _slis_handler(self, request: web.Request) -> web.Response:
        return _reset_or_render(request, self._slis.reset, self._slis.render)

    async def _serve_configz(self, _: web.Request) -> web.Response:
        # As component-base's configz writes it: compact JSON, exactly application/json.
        body = json.dumps({"componentconfig": self._configz()}, separators=(",", ":"))
        headers = {"Content-Type": "application/json", "X-Content-Type-Options": "nosniff"}
        return web.Response(body=body.encode(), headers=headers)


def _listening_host(host: str) -> str | None:
    """aiohttp's host for a bind address: None, which binds each IP family, for a wildcard."""
    try:
        return None if not host or ipaddress.ip_address(host).is_unspecified else host
    except ValueError:
        return host


@web.middleware
async def _no_cache(request: web.Request, handler: _Handler) -> web.StreamResponse:
    """apiserver's WithCacheControl: answers about this process must not be cached."""
    try:
        response = await handler(request)
    except web.HTTPException as raised:  # a redirect, say: an answer too
        raised.headers.setdefault("Cache-Control", _NO_CACHE)
        raise
    response.headers.setdefault("Cache-Control", _NO_CACHE)
    return response


async def _not_found(_: web.Request) -> web.Response:
    """Go's http.NotFoundHandler, which the mux falls back to."""
    return _text(_NOT_FOUND)


def _prometheus(body: bytes) -> web.Response:
    return web.Response(body=body, headers={"Content-Type": SchedulerMetrics.CONTENT_TYPE})


def _text(answer: Answer) -> web.Response:
    headers = {"Content-Type": _PLAIN_TEXT}
    if answer.nosniff:
        headers["X-Content-Type-Options"] = "nosniff"
    return web.Response(status=answer.status, body=answer.text.encode(), headers=headers)


def _reset_or_render(
    request: web.Request, reset: Callable[[], None], render: Callable[[], bytes]
) -> web.Response:
    """A metrics path: DELETE resets it (`metrics reset`), any other method reads it."""
    if request.method == "DELETE":
        reset()
        return _text(_METRICS_RESET)
    return _prometheus(render())
