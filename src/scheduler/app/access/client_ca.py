"""A bundle of CA certificates that client certificates must be issued by.

The TLS handshake already checks a presented certificate against every CA the port trusts
(validity, chain, client-auth purpose). Two bundles may be trusted at once, the client CA and the
front proxy's, and they confer different things, so each authenticator asks again which bundle
issued the certificate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.x509.oid import ExtendedKeyUsageOID

from scheduler.framework.errors import ConfigError


class CertificateRejectedError(Exception):
    """A client certificate that the bundle did not issue, or that is not valid now."""


@dataclass(frozen=True, slots=True)
class CABundle:
    certificates: tuple[x509.Certificate, ...]
    pem: bytes

    @classmethod
    def from_pem(cls, pem: bytes, *, source: str) -> CABundle:
        try:
            certificates = tuple(x509.load_pem_x509_certificates(pem))
        except ValueError as error:
            raise ConfigError(f"{source}: no PEM certificate in it ({error})") from error
        return cls(certificates, pem)

    @classmethod
    def from_file(cls, path: str, *, flag: str) -> CABundle:
        try:
            pem = Path(path).read_bytes()
        except OSError as error:
            raise ConfigError(f"{flag}: cannot read {path}: {error.strerror}") from error
        return cls.from_pem(pem, source=f"{flag} {path}")

    def verify(self, leaf: x509.Certificate, now: datetime) -> None:
        """Raise CertificateRejectedError unless one of the CAs signed `leaf` for client use."""
        if not leaf.not_valid_before_utc <= now <= leaf.not_valid_after_utc:
            raise CertificateRejectedError("x509: certificate has expired or is not yet valid")
        if not _allows_client_auth(leaf):
            raise CertificateRejectedError("x509: certificate specifies an incompatible key usage")
        for ca in self.certificates:
            if _issued_by(leaf, ca):
                return
        raise CertificateRejectedError("x509: certificate signed by unknown authority")


def combined_pem(bundles: Sequence[CABundle | None]) -> bytes:
    return b"".join(bundle.pem.rstrip(b"\n") + b"\n" for bundle in bundles if bundle is not None)


def _issued_by(leaf: x509.Certificate, ca: x509.Certificate) -> bool:
    try:
        leaf.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _allows_client_auth(leaf: x509.Certificate) -> bool:
    try:
        usage = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return True
    return (
        ExtendedKeyUsageOID.CLIENT_AUTH in usage
        or ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE in usage
    )
