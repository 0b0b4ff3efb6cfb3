"""The secure port's flags: delegated authentication, delegated authorization, TLS.

Spelled and defaulted as kube-scheduler's (which takes them from the generic API server
options): list flags take comma-separated values and may be repeated, durations use Go's syntax.
The port speaks HTTP/1.1 only, so --disable-http2-serving and --http2-max-streams-per-connection
are accepted and change nothing: there is no HTTP/2 to disable or limit.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from dataclasses import field
from typing import TypeVar

from scheduler.app.access.authn import DEFAULT_EXTRA_HEADER_PREFIXES
from scheduler.app.access.authn import DEFAULT_GROUP_HEADERS
from scheduler.app.access.authn import DEFAULT_TOKEN_CACHE_TTL
from scheduler.app.access.authn import DEFAULT_USERNAME_HEADERS
from scheduler.app.access.authz import DEFAULT_ALLOW_CACHE_TTL
from scheduler.app.access.authz import DEFAULT_ALWAYS_ALLOW_PATHS
from scheduler.app.access.authz import DEFAULT_DENY_CACHE_TTL
from scheduler.app.flag_kinds import bool_flag
from scheduler.app.flag_kinds import duration_flag
from scheduler.app.flag_kinds import int_list
from scheduler.app.flag_kinds import list_flag
from scheduler.app.flag_kinds import repeatable_flag
from scheduler.app.flag_kinds import text_flag

# An item of a list flag: a string, or an int for --tls-curve-preferences.
_T = TypeVar("_T")


@dataclass(slots=True)
class SecurePortOptions:
    authentication_kubeconfig: str = ""
    authentication_skip_lookup: bool = False
    # kube-scheduler turns this on: a cluster without the ConfigMap still gets a secure port.
    authentication_tolerate_lookup_failure: bool = True
    token_cache_ttl: float = DEFAULT_TOKEN_CACHE_TTL
    client_ca_file: str = ""
    requestheader_client_ca_file: str = ""
    requestheader_allowed_names: list[str] = field(default_factory=list)
    requestheader_username_headers: list[str] = field(
        default_factory=lambda: list(DEFAULT_USERNAME_HEADERS)
    )
    requestheader_uid_headers: list[str] = field(default_factory=list)
    requestheader_group_headers: list[str] = field(
        default_factory=lambda: list(DEFAULT_GROUP_HEADERS)
    )
    requestheader_extra_headers_prefix: list[str] = field(
        default_factory=lambda: list(DEFAULT_EXTRA_HEADER_PREFIXES)
    )
    authorization_kubeconfig: str = ""
    always_allow_paths: list[str] = field(default_factory=lambda: list(DEFAULT_ALWAYS_ALLOW_PATHS))
    authorized_cache_ttl: float = DEFAULT_ALLOW_CACHE_TTL
    unauthorized_cache_ttl: float = DEFAULT_DENY_CACHE_TTL
    cert_dir: str = ""
    tls_min_version: str = ""
    tls_cipher_suites: list[str] = field(default_factory=list)
    tls_curve_preferences: list[int] = field(default_factory=list)
    permit_address_sharing: bool = False
    permit_port_sharing: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SecurePortOptions:
        defaults = cls()

        def listed(value: list[list[_T]] | None, default: list[_T]) -> list[_T]:
            return default if value is None else [item for group in value for item in group]

        return cls(
            authentication_kubeconfig=args.authentication_kubeconfig,
            authentication_skip_lookup=args.authentication_skip_lookup,
            authentication_tolerate_lookup_failure=args.authentication_tolerate_lookup_failure,
            token_cache_ttl=args.authentication_token_webhook_cache_ttl,
            client_ca_file=args.client_ca_file,
            requestheader_client_ca_file=args.requestheader_client_ca_file,
            requestheader_allowed_names=listed(
                args.requestheader_allowed_names, defaults.requestheader_allowed_names
            ),
            requestheader_username_headers=listed(
                args.requestheader_username_headers, defaults.requestheader_username_headers
            ),
            requestheader_uid_headers=listed(
                args.requestheader_uid_headers, defaults.requestheader_uid_headers
            ),
            requestheader_group_headers=listed(
                args.requestheader_group_headers, defaults.requestheader_group_headers
            ),
            requestheader_extra_headers_prefix=listed(
                args.requestheader_extra_headers_prefix,
                defaults.requestheader_extra_headers_prefix,
            ),
            authorization_kubeconfig=args.authorization_kubeconfig,
            always_allow_paths=listed(
                args.authorization_always_allow_paths, defaults.always_allow_paths
            ),
            authorized_cache_ttl=args.authorization_webhook_cache_authorized_ttl,
            unauthorized_cache_ttl=args.authorization_webhook_cache_unauthorized_ttl,
            cert_dir=args.cert_dir,
            tls_min_version=args.tls_min_version,
            tls_cipher_suites=listed(args.tls_cipher_suites, defaults.tls_cipher_suites),
            tls_curve_preferences=listed(
                args.tls_curve_preferences, defaults.tls_curve_preferences
            ),
            permit_address_sharing=args.permit_address_sharing,
            permit_port_sharing=args.permit_port_sharing,
        )


def add_secure_port_flags(parser: argparse.ArgumentParser) -> None:
    serving = parser.add_argument_group("secure serving")
    text_flag(
        serving,
        "--cert-dir",
        "DIR",
        "where the self-signed serving pair is kept (kube-scheduler.crt/.key) when "
        "--tls-cert-file is not given; empty keeps it in memory",
    )
    text_flag(
        serving,
        "--tls-min-version",
        "VERSION",
        "VersionTLS10, VersionTLS11, VersionTLS12 (default) or VersionTLS13",
    )
    list_flag(serving, "--tls-cipher-suites", "Go cipher-suite names for TLS 1.2 and older")
    bool_flag(serving, "--disable-http2-serving", False, "accepted: HTTP/1.1 only here")
    serving.add_argument(
        "--http2-max-streams-per-connection",
        type=int,
        default=0,
        metavar="N",
        help="accepted: HTTP/1.1 only here",
    )
    bool_flag(serving, "--permit-address-sharing", False, "bind with SO_REUSEADDR")
    bool_flag(serving, "--permit-port-sharing", False, "bind with SO_REUSEPORT")
    serving.add_argument(
        "--tls-curve-preferences",
        type=int_list,
        action="append",
        metavar="IDS",
        help="one Go curve ID: 23, 24, 25 or 29",
    )
    repeatable_flag(serving, "--tls-sni-cert-key", "PAIR", "refused: one serving pair only")

    authn = parser.add_argument_group("authentication")
    text_flag(
        authn,
        "--authentication-kubeconfig",
        "FILE",
        "kubeconfig for TokenReviews and the client-CA lookup (else in-cluster, if any)",
    )
    bool_flag(
        authn,
        "--authentication-skip-lookup",
        False,
        "do not read missing client-CA settings from kube-system/extension-apiserver-"
        "authentication",
    )
    bool_flag(
        authn,
        "--authentication-tolerate-lookup-failure",
        True,
        "start even if that ConfigMap cannot be read",
    )
    duration_flag(
        authn,
        "--authentication-token-webhook-cache-ttl",
        DEFAULT_TOKEN_CACHE_TTL,
        "how long TokenReview answers are cached (default 10s)",
    )
    text_flag(
        authn,
        "--client-ca-file",
        "FILE",
        "CA bundle that client certificates must be issued by (CN is the user, O the groups)",
    )
    text_flag(
        authn,
        "--requestheader-client-ca-file",
        "FILE",
        "CA bundle of the front proxies whose headers are trusted",
    )
    list_flag(
        authn,
        "--requestheader-allowed-names",
        "common names a front proxy may have (empty: any from the CA)",
    )
    list_flag(authn, "--requestheader-username-headers", "default X-Remote-User")
    list_flag(authn, "--requestheader-uid-headers", "none by default")
    list_flag(authn, "--requestheader-group-headers", "default X-Remote-Group")
    list_flag(authn, "--requestheader-extra-headers-prefix", "default X-Remote-Extra-")

    authz = parser.add_argument_group("authorization")
    text_flag(
        authz,
        "--authorization-kubeconfig",
        "FILE",
        "kubeconfig for SubjectAccessReviews (else in-cluster, if any)",
    )
    list_flag(
        authz,
        "--authorization-always-allow-paths",
        "paths served without authorization (default /healthz,/readyz,/livez)",
    )
    duration_flag(
        authz,
        "--authorization-webhook-cache-authorized-ttl",
        DEFAULT_ALLOW_CACHE_TTL,
        "how long an allowing SubjectAccessReview is cached (default 10s)",
    )
    duration_flag(
        authz,
        "--authorization-webhook-cache-unauthorized-ttl",
        DEFAULT_DENY_CACHE_TTL,
        "how long a denying SubjectAccessReview is cached (default 10s)",
    )
