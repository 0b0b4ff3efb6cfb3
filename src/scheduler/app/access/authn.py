"""Authenticating a request to the secure port, in kube-scheduler's order.

1. a front proxy: a client certificate from the request-header CA (with an allowed common
   name, when names are listed) vouches for the user named in its headers;
2. a client certificate from the client CA: the user is its common name, the groups its
   organizations;
3. a bearer token, reviewed by the API server (TokenReview) and cached;
4. else the anonymous user.

An authenticator that fails (a certificate it rejects, a token the server does not accept)
does not stop the later ones; if none succeeds and any failed, the request is unauthorized
(401) rather than anonymous: a bad credential is never downgraded to no credential.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import unquote

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import NameOID

from scheduler.app.access.chain import Outcome
from scheduler.app.access.chain import ask_in_turn
from scheduler.app.access.client_ca import CABundle
from scheduler.app.access.client_ca import CertificateRejectedError
from scheduler.app.access.reviews import TOKEN_REVIEWS
from scheduler.app.access.reviews import ReviewAPI
from scheduler.app.access.reviews import create_review
from scheduler.app.access.ttl_cache import TTLCache
from scheduler.app.access.user import ANONYMOUS
from scheduler.app.access.user import CREDENTIAL_ID_KEY
from scheduler.app.access.user import UserInfo
from scheduler.framework.clock import Clock
from scheduler.framework.errors import APIError

# Upstream's defaults for the request-header flags.
DEFAULT_USERNAME_HEADERS = ("x-remote-user",)
DEFAULT_GROUP_HEADERS = ("x-remote-group",)
DEFAULT_EXTRA_HEADER_PREFIXES = ("x-remote-extra-",)
DEFAULT_TOKEN_CACHE_TTL = 10.0


class AuthenticationFailedError(Exception):
    """The request carried a credential that did not prove who it is."""


@dataclass(frozen=True, slots=True)
class Credentials:
    """What a request presents: its headers (lower-case names, every value) and the client
    certificate of its TLS connection."""

    headers: Mapping[str, tuple[str, ...]]
    peer_certificate: x509.Certificate | None

    def first(self, name: str) -> str:
        values = self.headers.get(name.lower(), ())
        return values[0] if values else ""


class Authenticator(Protocol):
    async def authenticate(self, credentials: Credentials) -> UserInfo | None:
        """The user, None when the request carries no credential of this kind; raises
        AuthenticationFailedError for one that does not hold."""


class FrontProxyAuthenticator:
    def __init__(
        self,
        ca: CABundle,
        clock: Clock,
        *,
        allowed_names: Sequence[str] = (),
        username_headers: Sequence[str] = DEFAULT_USERNAME_HEADERS,
        uid_headers: Sequence[str] = (),
        group_headers: Sequence[str] = DEFAULT_GROUP_HEADERS,
        extra_prefixes: Sequence[str] = DEFAULT_EXTRA_HEADER_PREFIXES,
    ) -> None:
        self._ca = ca
        self._clock = clock
        self._allowed_names = frozenset(allowed_names)
        self._username_headers = tuple(h.lower() for h in username_headers)
        self._uid_headers = tuple(h.lower() for h in uid_headers)
        self._group_headers = tuple(h.lower() for h in group_headers)
        self._extra_prefixes = tuple(p.lower() for p in extra_prefixes)

    async def authenticate(self, credentials: Credentials) -> UserInfo | None:
        leaf = _issued_client_certificate(credentials, self._ca, self._clock)
        if leaf is None:
            return None
        common_name = _common_name(leaf)
        if self._allowed_names and common_name not in self._allowed_names:
            raise AuthenticationFailedError(
                f"x509: subject with cn={common_name} is not in the allowed list"
            )
        name = _first_of(credentials, self._username_headers)
        if not name:
            return None
        groups = tuple(
            value
            for header in self._group_headers
            for value in credentials.headers.get(header, ())
            if value
        )
        return UserInfo(
            name=name,
            uid=_first_of(credentials, self._uid_headers),
            groups=groups,
            extra=self._extra(credentials),
        )

    def _extra(self, credentials: Credentials) -> dict[str, tuple[str, ...]]:
        extra: dict[str, tuple[str, ...]] = {}
        for header, values in credentials.headers.items():
            for prefix in self._extra_prefixes:
                if header.startswith(prefix) and len(header) > len(prefix):
                    key = unquote(header[len(prefix) :]).lower()
                    extra[key] = (*extra.get(key, ()), *values)
        return extra


class ClientCertAuthenticator:
    def __init__(self, ca: CABundle, clock: Clock) -> None:
        self._ca = ca
        self._clock = clock

    async def authenticate(self, credentials: Credentials) -> UserInfo | None:
        leaf = _issued_client_certificate(credentials, self._ca, self._clock)
        if leaf is None:
            return None
        common_name = _common_name(leaf)
        if not common_name:
            return None
        organizations = leaf.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
        fingerprint = hashlib.sha256(leaf.public_bytes(Encoding.DER)).hexdigest()
        return UserInfo(
            name=common_name,
            groups=tuple(str(o.value) for o in organizations),
            extra={CREDENTIAL_ID_KEY: (f"X509SHA256={fingerprint}",)},
        )


@dataclass(frozen=True, slots=True)
class _TokenAnswer:
    user: UserInfo | None


class TokenReviewAuthenticator:
    """Bearer tokens, checked by the API server. Answers are cached for `cache_ttl` seconds,
    keyed by a hash of the token (the token itself is never kept); failed reviews are not."""

    def __init__(self, api: ReviewAPI, clock: Clock, *, cache_ttl: float) -> None:
        self._api = api
        self._clock = clock
        self._cache_ttl = cache_ttl
        self._cache: TTLCache[_TokenAnswer] = TTLCache(clock)

    async def authenticate(self, credentials: Credentials) -> UserInfo | None:
        token = bearer_token(credentials.first("authorization"))
        if not token:
            return None
        key = hashlib.sha256(token.encode()).hexdigest()
        answer = self._cache.get(key)
        if answer is None:
            answer = await self._review(token)
            self._cache.put(key, answer, self._cache_ttl)
        if answer.user is None:
            raise AuthenticationFailedError("invalid bearer token")
        return answer.user

    async def _review(self, token: str) -> _TokenAnswer:
        try:
            status = await create_review(self._api, TOKEN_REVIEWS, {"token": token}, self._clock)
        except APIError as error:
            raise AuthenticationFailedError(f"TokenReview: {error}") from error
        if not status.get("authenticated"):
            if status.get("error"):
                raise AuthenticationFailedError(str(status["error"]))
            return _TokenAnswer(None)
        user = status.get("user") or {}
        extra = user.get("extra") or {}
        return _TokenAnswer(
            UserInfo(
                name=str(user.get("username") or ""),
                uid=str(user.get("uid") or ""),
                groups=tuple(str(g) for g in user.get("groups") or ()),
                extra={str(k): tuple(str(v) for v in values or ()) for k, values in extra.items()},
            )
        )


class RequestAuthenticator:
    """The chain above, then the authenticated group, then the anonymous fallback."""

    def __init__(self, chain: Sequence[Authenticator]) -> None:
        self._chain = tuple(chain)

    async def authenticate(self, credentials: Credentials) -> UserInfo:
        outcome: Outcome[UserInfo | None] = await ask_in_turn(
            self._chain,
            lambda authenticator: authenticator.authenticate(credentials),
            decides=lambda user: user is not None,
            failure=AuthenticationFailedError,
        )
        user = outcome.decided
        return ANONYMOUS if user is None else user.with_authenticated_group()


def bearer_token(authorization: str) -> str:
    """The token of an `Authorization: Bearer <token>` header, "" for any other header."""
    parts = authorization.strip().split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return ""
    return parts[1]


def _issued_client_certificate(
    credentials: Credentials, ca: CABundle, clock: Clock
) -> x509.Certificate | None:
    """The request's client certificate, None without one; raises if `ca` did not issue it."""
    leaf = credentials.peer_certificate
    if leaf is None:
        return None
    try:
        ca.verify(leaf, clock.wall())
    except CertificateRejectedError as error:
        raise AuthenticationFailedError(str(error)) from error
    return leaf


def _first_of(credentials: Credentials, headers: Sequence[str]) -> str:
    for header in headers:
        value = credentials.first(header)
        if value:
            return value
    return ""


def _common_name(certificate: x509.Certificate) -> str:
    names = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if names else ""
