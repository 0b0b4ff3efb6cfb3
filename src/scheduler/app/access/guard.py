"""The aiohttp middleware that authenticates and authorizes every request to the secure port.

Refusals carry the API server's `Status` bodies: 401 `Unauthorized` for a credential that does
not hold, 403 `forbidden: User "<name>" cannot <verb> path "<path>"` when no authorizer allows,
500 when a review could not be made.
"""

from __future__ import annotations

import json
import logging
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from cryptography import x509

from scheduler.app.access.authn import AuthenticationFailedError, Credentials, RequestAuthenticator
from scheduler.app.access.authz import Attributes, AuthorizationError, Decision, RequestAuthorizer

_log = logging.getLogger("scheduler.secure_port")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class AccessGuard:
    def __init__(self, authenticator: RequestAuthenticator, authorizer: RequestAuthorizer) -> None:
        self._authenticator = authenticator
        self._authorizer = authorizer

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            user = await self._authenticator.authenticate(credentials_of(request))
        except AuthenticationFailedError as error:
            _log.info("unable to authenticate the request", extra={"error": str(error)})
            return status_response(401, "Unauthorized", "Unauthorized")
        attributes = Attributes(user=user, verb=request.method.lower(), path=request.path)
        try:
            verdict = await self._authorizer.authorize(attributes)
        except AuthorizationError as error:
            return status_response(
                500,
                "InternalError",
                f"Internal error occurred: {error}",
                details={"causes": [{"message": str(error)}]},
            )
        if verdict.decision is Decision.ALLOW:
            return await handler(request)
        message = f'forbidden: User "{user.name}" cannot {attributes.verb} path "{request.path}"'
        if verdict.reason:
            message = f"{message}: {verdict.reason}"
        return status_response(403, "Forbidden", message, details={})


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
