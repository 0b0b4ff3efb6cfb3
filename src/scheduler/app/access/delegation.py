"""Building the secure port's guard from its flags, as kube-scheduler builds its own.

Reviews go to the API server on clients of their own: from `--authentication-kubeconfig` and
`--authorization-kubeconfig`, or else from the pod's service account when running in a cluster;
with neither, kube-scheduler starts all the same (warning that tokens cannot be checked), and
so do we. Such clients get upstream's budget: 200 requests/s, bursts of 400, 10 s per request.

Client-CA and front-proxy settings not given as flags are read once at start-up from the
ConfigMap kube-system/extension-apiserver-authentication, which kube-apiserver publishes
(unless `--authentication-skip-lookup`); failing to read it is only a warning, as kube-scheduler
tolerates that. Upstream keeps watching the ConfigMap and the CA files for changes; we read
them once, so rotating a client CA needs a restart.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from scheduler.app.access.authn import Authenticator
from scheduler.app.access.authn import ClientCertAuthenticator
from scheduler.app.access.authn import FrontProxyAuthenticator
from scheduler.app.access.authn import RequestAuthenticator
from scheduler.app.access.authn import TokenReviewAuthenticator
from scheduler.app.access.authz import AlwaysAllowPaths
from scheduler.app.access.authz import Authorizer
from scheduler.app.access.authz import PrivilegedGroups
from scheduler.app.access.authz import RequestAuthorizer
from scheduler.app.access.authz import SubjectAccessReviewAuthorizer
from scheduler.app.access.client_ca import CABundle
from scheduler.app.access.client_ca import combined_pem
from scheduler.app.access.guard import AccessGuard
from scheduler.app.access.reviews import ACCESS_REVIEWS
from scheduler.app.access.reviews import TOKEN_REVIEWS
from scheduler.app.secure_port_options import SecurePortOptions
from scheduler.app.tls_options import TLSOptions
from scheduler.cluster.kube import KubeClusterClient
from scheduler.cluster.kube import connect
from scheduler.framework.clock import Clock
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConfigError
from scheduler.observability import get_logger

_log = get_logger("scheduler.secure_port")

REVIEW_QPS = 200.0
REVIEW_BURST = 400
REVIEW_TIMEOUT = 10.0
AUTHENTICATION_CONFIGMAP = ("kube-system", "extension-apiserver-authentication")


@dataclass
class SecurePortAccess:
    """The guard, the CA bundle the TLS handshake must ask client certificates for, the TLS
    settings, and the review clients to close at shutdown."""

    guard: AccessGuard
    client_ca_pem: bytes = b""
    tls: TLSOptions = field(default_factory=TLSOptions)
    clients: list[KubeClusterClient] = field(default_factory=list)

    async def close(self) -> None:
        for client in self.clients:
            await client.close()


async def build_access(
    options: SecurePortOptions,
    *,
    clock: Clock,
    user_agent: str,
    environ: Mapping[str, str] | None = None,
) -> SecurePortAccess:
    environ = os.environ if environ is None else environ
    # Fail on a bad flag before any client is opened.
    tls = TLSOptions.from_flags(
        options.tls_min_version, options.tls_cipher_suites, options.tls_curve_preferences
    )
    authorized_paths = AlwaysAllowPaths(options.always_allow_paths)
    client_ca = _bundle(options.client_ca_file, "--client-ca-file")
    proxy_ca = _bundle(options.requestheader_client_ca_file, "--requestheader-client-ca-file")
    clients: list[KubeClusterClient] = []
    try:
        authn_client = await _review_client(
            options.authentication_kubeconfig, "--authentication-kubeconfig", user_agent, environ
        )
        if authn_client is not None:
            clients.append(authn_client)
            authn_client.resources.register(TOKEN_REVIEWS)
        authz_client = await _review_client(
            options.authorization_kubeconfig, "--authorization-kubeconfig", user_agent, environ
        )
        if authz_client is not None:
            clients.append(authz_client)
            authz_client.resources.register(ACCESS_REVIEWS)

        proxy = _FrontProxySettings.from_flags(options, proxy_ca)
        if (client_ca is None or proxy_ca is None) and not options.authentication_skip_lookup:
            published = await _published_settings(authn_client, options)
            if client_ca is None and "client-ca-file" in published:
                client_ca = CABundle.from_pem(
                    published["client-ca-file"].encode(), source=_configmap_key("client-ca-file")
                )
            if proxy_ca is None:
                proxy = _FrontProxySettings.from_configmap(published)

        chain: list[Authenticator] = []
        if proxy is not None:
            chain.append(proxy.authenticator(clock))
        if client_ca is not None:
            chain.append(ClientCertAuthenticator(client_ca, clock))
        if authn_client is not None:
            chain.append(
                TokenReviewAuthenticator(authn_client, clock, cache_ttl=options.token_cache_ttl)
            )

        authorizers: list[Authorizer] = [PrivilegedGroups(), authorized_paths]
        if authz_client is None:
            _log.warning(
                "No authorization-kubeconfig provided, so SubjectAccessReview of authorization "
                "tokens won't work."
            )
        else:
            authorizers.append(
                SubjectAccessReviewAuthorizer(
                    authz_client,
                    clock,
                    allow_ttl=options.authorized_cache_ttl,
                    deny_ttl=options.unauthorized_cache_ttl,
                )
            )
    except BaseException:
        for client in clients:
            await client.close()
        raise
    trusted = combined_pem([client_ca, proxy.ca if proxy is not None else None])
    guard = AccessGuard(RequestAuthenticator(chain), RequestAuthorizer(authorizers))
    return SecurePortAccess(guard, trusted, tls, clients)


@dataclass(frozen=True, slots=True)
class _FrontProxySettings:
    ca: CABundle
    allowed_names: Sequence[str]
    username_headers: Sequence[str]
    uid_headers: Sequence[str]
    group_headers: Sequence[str]
    extra_prefixes: Sequence[str]

    @classmethod
    def from_flags(
        cls, options: SecurePortOptions, ca: CABundle | None
    ) -> _FrontProxySettings | None:
        if ca is None:
            return None
        return cls(
            ca,
            options.requestheader_allowed_names,
            options.requestheader_username_headers,
            options.requestheader_uid_headers,
            options.requestheader_group_headers,
            options.requestheader_extra_headers_prefix,
        )

    @classmethod
    def from_configmap(cls, published: Mapping[str, str]) -> _FrontProxySettings | None:
        pem = published.get("requestheader-client-ca-file", "")
        if not pem:
            return None
        return cls(
            CABundle.from_pem(pem.encode(), source=_configmap_key("requestheader-client-ca-file")),
            _json_list(published, "requestheader-allowed-names"),
            _json_list(published, "requestheader-username-headers"),
            _json_list(published, "requestheader-uid-headers"),
            _json_list(published, "requestheader-group-headers"),
            _json_list(published, "requestheader-extra-headers-prefix"),
        )

    def authenticator(self, clock: Clock) -> FrontProxyAuthenticator:
        return FrontProxyAuthenticator(
            self.ca,
            clock,
            allowed_names=self.allowed_names,
            username_headers=self.username_headers,
            uid_headers=self.uid_headers,
            group_headers=self.group_headers,
            extra_prefixes=self.extra_prefixes,
        )


async def _review_client(
    kubeconfig: str, flag: str, user_agent: str, environ: Mapping[str, str]
) -> KubeClusterClient | None:
    if not kubeconfig and not environ.get("KUBERNETES_SERVICE_HOST"):
        return None
    return await connect(
        kubeconfig=kubeconfig or None,
        master=None,
        qps=REVIEW_QPS,
        burst=REVIEW_BURST,
        user_agent=user_agent,
        request_timeout=REVIEW_TIMEOUT,
        flag=flag,
    )


async def _published_settings(
    client: KubeClusterClient | None, options: SecurePortOptions
) -> dict[str, str]:
    namespace, name = AUTHENTICATION_CONFIGMAP
    if client is None:
        _log.warning(
            "No authentication-kubeconfig provided in order to lookup client-ca-file and "
            "requestheader-client-ca-file in the authentication configmap, so client "
            "certificate authentication won't work.",
            configmap=f"{namespace}/{name}",
        )
        return {}
    try:
        config_map = await client.get("configmaps", namespace, name)
    except APIError as error:
        if not options.authentication_tolerate_lookup_failure:
            raise ConfigError(
                f"--authentication-kubeconfig: cannot read configmap {namespace}/{name}: {error}"
            ) from error
        _log.warning(
            "Error looking up in-cluster authentication configuration; continuing without it, "
            "which may treat all requests as anonymous",
            err=str(error),
        )
        return {}
    data: Any = config_map.get("data") or {}
    return {str(k): str(v) for k, v in data.items()}


def _bundle(path: str, flag: str) -> CABundle | None:
    return CABundle.from_file(path, flag=flag) if path else None


def _configmap_key(key: str) -> str:
    namespace, name = AUTHENTICATION_CONFIGMAP
    return f"configmap {namespace}/{name} key {key}"


def _json_list(published: Mapping[str, str], key: str) -> list[str]:
    text = published.get(key, "")
    if not text:
        return []
    try:
        values = json.loads(text)
    except ValueError as error:
        raise ConfigError(f"{_configmap_key(key)}: not a JSON list ({error})") from error
    if not isinstance(values, list):
        raise ConfigError(f"{_configmap_key(key)}: not a JSON list")
    return [str(v) for v in values]
