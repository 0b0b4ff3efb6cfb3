"""`--tls-min-version` and `--tls-cipher-suites`: Go's names, applied to an OpenSSL context.

The cipher-suite names are those of Go's crypto/tls, which kube-scheduler takes. As in Go, the
list governs TLS 1.2 and older only; TLS 1.3 suites are not configurable, and naming one is
accepted and has no effect. A name Go does not know, or one this OpenSSL cannot offer (RC4 and
3DES are often compiled out), fails start-up naming the suite.
"""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from dataclasses import dataclass

from scheduler.framework.errors import ConfigError

TLS_VERSIONS = {
    "VersionTLS10": ssl.TLSVersion.TLSv1,
    "VersionTLS11": ssl.TLSVersion.TLSv1_1,
    "VersionTLS12": ssl.TLSVersion.TLSv1_2,
    "VersionTLS13": ssl.TLSVersion.TLSv1_3,
}
# Go's default minimum for servers.
DEFAULT_MIN_VERSION = ssl.TLSVersion.TLSv1_2

_TLS13_SUITES = frozenset(
    {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}
)
_OPENSSL_NAMES = {
    "TLS_RSA_WITH_RC4_128_SHA": "RC4-SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA": "DES-CBC3-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA": "ECDHE-ECDSA-RC4-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA": "ECDHE-RSA-RC4-SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA": "ECDHE-RSA-DES-CBC3-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    # Go's older spellings of the two above.
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": "ECDHE-ECDSA-CHACHA20-POLY1305",
}


# Go's tls.CurveID numbers and OpenSSL's names for them.
_CURVES = {23: "prime256v1", 24: "secp384r1", 25: "secp521r1", 29: "X25519"}


@dataclass(frozen=True, slots=True)
class TLSOptions:
    min_version: ssl.TLSVersion = DEFAULT_MIN_VERSION
    # OpenSSL names; empty means the library's defaults.
    ciphers: tuple[str, ...] = ()
    # OpenSSL's name of the one key-exchange curve to offer; empty means the defaults.
    curve: str = ""

    @classmethod
    def from_flags(
        cls, min_version: str, cipher_suites: Sequence[str], curves: Sequence[int] = ()
    ) -> TLSOptions:
        version = DEFAULT_MIN_VERSION
        if min_version:
            if min_version not in TLS_VERSIONS:
                raise ConfigError(
                    f"--tls-min-version: unknown TLS version {min_version!r}; choose from "
                    + ", ".join(TLS_VERSIONS)
                )
            version = TLS_VERSIONS[min_version]
        ciphers: list[str] = []
        for suite in cipher_suites:
            if suite in _TLS13_SUITES:
                continue
            if suite not in _OPENSSL_NAMES:
                raise ConfigError(f"--tls-cipher-suites: cipher suite {suite} not supported")
            try:
                ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).set_ciphers(_OPENSSL_NAMES[suite])
            except ssl.SSLError as error:
                raise ConfigError(
                    f"--tls-cipher-suites: cipher suite {suite} is not available in this OpenSSL"
                ) from error
            ciphers.append(_OPENSSL_NAMES[suite])
        return cls(version, tuple(ciphers), _curve(curves))

    def apply(self, context: ssl.SSLContext) -> None:
        context.minimum_version = self.min_version
        if self.ciphers:
            context.set_ciphers(":".join(self.ciphers))
        if self.curve:
            context.set_ecdh_curve(self.curve)


def _curve(curves: Sequence[int]) -> str:
    if not curves:
        return ""
    if len(curves) > 1:
        raise ConfigError(
            "--tls-curve-preferences: only one curve can be preferred here (Python's ssl "
            f"module sets a single curve), got {curves}"
        )
    if curves[0] not in _CURVES:
        raise ConfigError(f"--tls-curve-preferences: unsupported curve {curves[0]}")
    return _CURVES[curves[0]]
