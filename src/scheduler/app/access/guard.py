"""The aiohttp middleware that authenticates and authorizes every request to the secure port.

Refusals are written as the API server's filters write them: 401 `Unauthorized` for a
credential that does not hold and 403 `forbidden: User "<name>" cannot <verb> path "<path>"`
when no authorizer allows, both as compact JSON `Status` objects (the 403 with `nosniff`, the
401 without, as upstream); and, when a review could not be made, 500 with the plain-text line
of responsewriters.InternalError: `Internal Server Error: "<request URI>": <error>`.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from aiohttp import web
from cryptography import x509

from scheduler.app.access.authn import AuthenticationFailedError
from scheduler.app.access.authn import Credentials
from scheduler.app.access.authn import RequestAuthenticator
from scheduler.app.access.authz import Attributes
from scheduler.app.access.authz import AuthorizationError
from scheduler.app.access.authz import Decision
from scheduler.app.access.authz import RequestAuthorizer
from scheduler.app.go_text import go_quote
from scheduler.framework.clock import Clock
from scheduler.framework.clock import SystemClock
from scheduler.observability import get_logger
from scheduler.observability.component_metrics import SecurePortMetrics

_log = get_logger("scheduler.secure_port")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class AccessGuard:
    def __init__(self, authenticator: RequestAuthenticator, authorizer: RequestAuthorizer) -> None:
        self._authenticator = authenticator
        self._authorizer = authorizer
        self._metrics: SecurePortMetrics | None = None
        self._clock: Clock = SystemClock()

    def observe(self, metrics: SecurePortMetrics, clock: Clock) -> None:
        """Record each authentication and authorization, timed by `clock`, from now on."""
        self._metrics, self._clock = metrics, clock

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        credentials = credentials_of(request)
        started = self._clock.now()
        if self._metrics is not None and credentials.peer_certificate is not None:
            expires = credentials.peer_certificate.not_valid_after_utc
            self._metrics.client_certificate((expires - self._clock.wall()).total_seconds())
        try:
            user = await self._authenticator.authenticate(credentials)
        except AuthenticationFailedError as error:
            _log.info("unable to authenticate the request", err=str(error))
            self._authenticated("error", started)
            return status_response(401, "Unauthorized", "Unauthorized")
        self._authenticated("success", started, user.name)
        attributes = Attributes(user=user, verb=request.method.lower(), path=request.path)
        started = self._clock.now()
        try:
            verdict = await self._authorizer.authorize(attributes)
        except AuthorizationError as error:
            self._authorized("error", started)
            _log.error("authorization failed", err=str(error))
            return internal_error(request, error)
        self._authorized(_RESULTS[verdict.decision], started)
        if verdict.decision is Decision.ALLOW:
            return await handler(request)
        message = f'forbidden: User "{user.name}" cannot {attributes.verb} path "{request.path}"'
        if verdict.reason:
            message = f"{message}: {verdict.reason}"
        # responsewriters.Forbidden marks it nosniff; the 401 is written without.
        return status_response(403, "Forbidden", message, details={}, nosniff=True)

    def _authenticated(self, result: str, started: float, username: str = "") -> None:
        if self._metrics is not None:
            self._metrics.authentication(result, self._clock.now() - started, username)

    def _authorized(self, result: str, started: float) -> None:
        if self._metrics is not None:
            self._metrics.authorization(result, self._clock.now() - started)


# authorization_attempts_total's result label per decision.
_RESULTS = {Decision.ALLOW: "allowed", Decision.DENY: "denied", Decision.NO_OPINION: "no-opinion"}


def credentials_of(request: web.Request) -> Credentials:
    headers: dict[str, tuple[str, ...]] = {}
    for name, value in request.headers.items():
        key = name.lower()
        headers[key] = (*headers.get(key, ()), value)
    return Credentials(headers=headers, peer_certificate=_peer_certificate(request))


def _peer_certificate(request: web.Request) -> x509.Certificate | None:
    transport = request.transport
    tls = transport.get_extra_info("ssl_object") if transport is not None else None
    if not isinstance(tls, ssl.SSLObject | ssl.SSLSocket):
        return None
    der = tls.getpeercert(binary_form=True)
    return x509.load_der_x509_certificate(der) if der else None


def status_response(
    code: int,
    reason: str,
    message: str,
    *,
    details: dict[str, Any] | None = None,
    nosniff: bool = False,
) -> web.Response:
    """A `metav1.Status` failure, as the API server's handlers write one: compact JSON ended by
    a newline (Go's JSON encoder), typed `application/json` with no charset."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details is not None:
        body["details"] = details
    body["code"] = code
    headers = {"Content-Type": "application/json"}
    if nosniff:
        headers["X-Content-Type-Options"] = "nosniff"
    encoded = json.dumps(body, separators=(",", ":")) + "\n"
    return web.Response(status=code, body=encoded.encode(), headers=headers)


# responsewriters' sanitizer: an error quoting the request must not read as HTML.
_HTML_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def internal_error(request: web.Request, error: Exception) -> web.Response:
    """responsewriters.InternalError: one plain-text line through Go's http.Error, naming the
    request URI as the client sent it (path and query, still percent-encoded)."""
    line = f"Internal Server Error: {go_quote(request.raw_path)}: {error}".translate(_HTML_ESCAPES)
    return web.Response(
        status=500,
        body=f"{line}\n".encode(),
        headers={"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"},
    )
