"""The aiohttp middleware that authenticates and authorizes every request to the secure port.

Refusals carry the API server's `Status` bodies: 401 `Unauthorized` for a credential that does
not hold, 403 `forbidden: User "<name>" cannot <verb> path "<path>"` when no authorizer allows,
500 when a review could not be made.
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
            return status_response(
                500,
                "InternalError",
                f"Internal error occurred: {error}",
                details={"causes": [{"message": str(error)}]},
            )
        self._authorized(_RESULTS[verdict.decision], started)
        if verdict.decision is Decision.ALLOW:
            return await handler(request)
        message = f'forbidden: User "{user.name}" cannot {attributes.verb} path "{request.path}"'
        if verdict.reason:
            message = f"{message}: {verdict.reason}"
        return status_response(403, "Forbidden", message, details={})

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
    code: int, reason: str, message: str, *, details: dict[str, Any] | None = None
) -> web.Response:
    """A `metav1.Status` failure, as the API server's handlers write one."""
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
    return web.Response(status=code, text=json.dumps(body), content_type="application/json")
