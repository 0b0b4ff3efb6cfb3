"""The TLS identity of the secure port: given files, or a self-signed pair made at start-up.

Without --tls-cert-file/--tls-private-key-file, kube-scheduler serves a certificate signed by a
throw-away CA it generates in memory, valid for "localhost", 127.0.0.1 and the bind address. We
do the same. The keys are ECDSA P-256 (upstream uses RSA 2048): every TLS client accepts them
and they take a millisecond, not a noticeable pause, to generate.
"""

from __future__ import annotations

import ipaddress
import ssl
import tempfile
from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID
from cryptography.x509.oid import NameOID

from scheduler.framework.errors import ConfigError

# Upstream's self-signed certificates: valid from an hour ago (tolerating clock skew) for a year.
_BACKDATE = timedelta(hours=1)
_VALIDITY = timedelta(days=365)
_PUBLIC_HOST = "localhost"
_LOOPBACK = ipaddress.ip_address("127.0.0.1")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True, slots=True)
class SelfSignedCert:
    """PEM: the serving certificate followed by its CA (the chain to serve), the serving key,
    and the CA alone (what a client must trust)."""

    cert_chain_pem: bytes
    key_pem: bytes
    ca_pem: bytes


def generate_self_signed(bind_host: str, now: datetime) -> SelfSignedCert:
    """A CA and a serving certificate it signs, valid for localhost, 127.0.0.1 and `bind_host`
    (unless that is a wildcard address)."""
    ips: list[IPAddress] = [_LOOPBACK]
    dns = [_PUBLIC_HOST]
    bind_ip = _parse_ip(bind_host)
    if bind_ip is None:
        if bind_host:
            dns.append(bind_host)
    elif not bind_ip.is_unspecified:
        ips.append(bind_ip)
    stamp = int(now.timestamp())
    not_before, not_after = now - _BACKDATE, now - _BACKDATE + _VALIDITY

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name(f"{_PUBLIC_HOST}-ca@{stamp}")
    ca_cert = (
        _builder(ca_name, ca_name, ca_key.public_key(), not_before, not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=True), critical=True)
        .sign(ca_key, hashes.SHA256())
    )

    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dict.fromkeys(dns)]
    sans += [x509.IPAddress(ip) for ip in dict.fromkeys(ips)]
    cert = (
        _builder(_name(f"{_PUBLIC_HOST}@{stamp}"), ca_name, key.public_key(), not_before, not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    ca_pem = ca_cert.public_bytes(serialization.Encoding.PEM)
    return SelfSignedCert(
        cert_chain_pem=cert.public_bytes(serialization.Encoding.PEM) + ca_pem,
        key_pem=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
        ca_pem=ca_pem,
    )


def check_serving_pair(cert_file: str | None, key_file: str | None) -> None:
    """--tls-cert-file and --tls-private-key-file, checked before anything starts, as
    apiserver loads them: both or neither, each readable, and a key that fits the certificate."""
    if cert_file is None and key_file is None:
        return
    if cert_file is None or key_file is None:
        raise ConfigError(
            "missing filename for serving cert: --tls-cert-file and --tls-private-key-file "
            "go together"
        )
    for flag, path in (("--tls-cert-file", cert_file), ("--tls-private-key-file", key_file)):
        try:
            Path(path).read_bytes()
        except OSError as error:
            raise ConfigError(f"{flag}: cannot read {path}: {error.strerror or error}") from error
    try:
        server_context_from_files(cert_file, key_file)
    except ssl.SSLError as error:
        raise ConfigError(
            f"--tls-cert-file {cert_file} with --tls-private-key-file {key_file}: {error}"
        ) from error


def server_context_from_files(cert_file: str, key_file: str) -> ssl.SSLContext:
    context = _server_context()
    context.load_cert_chain(cert_file, key_file)
    return context


def server_context_from_pem(cert_chain_pem: bytes, key_pem: bytes) -> ssl.SSLContext:
    """The ssl module loads certificates only from files: write them to a private temporary
    directory (mode 0700) and remove it as soon as they are loaded."""
    with tempfile.TemporaryDirectory(prefix="kube-pyscheduler-tls-") as directory:
        cert_file, key_file = Path(directory, "tls.crt"), Path(directory, "tls.key")
        _write_pair(cert_file, cert_chain_pem, key_file, key_pem)
        return server_context_from_files(str(cert_file), str(key_file))


def _write_pair(cert_file: Path, cert_chain_pem: bytes, key_file: Path, key_pem: bytes) -> None:
    """A new key file is made readable by its owner only before the key is written to it."""
    cert_file.write_bytes(cert_chain_pem)
    key_file.touch(mode=0o600)
    key_file.write_bytes(key_pem)


def _server_context() -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


def _parse_ip(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(
    subject: x509.Name,
    issuer: x509.Name,
    public_key: ec.EllipticCurvePublicKey,
    not_before: datetime,
    not_after: datetime,
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
    )


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,  # no key transport with ECDSA keys
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )


# kube-scheduler's name for the pair it keeps in --cert-dir; a drop-in reuses the same files.
CERT_DIR_PAIR_NAME = "kube-scheduler"


def cert_dir_pair(cert_dir: str, bind_host: str, now: datetime) -> tuple[str, str]:
    """The serving pair kept in `cert_dir`: reused when both files exist, else generated
    (self-signed, as above) and written there first, as kube-scheduler does with --cert-dir."""
    directory = Path(cert_dir)
    cert_file = directory / f"{CERT_DIR_PAIR_NAME}.crt"
    key_file = directory / f"{CERT_DIR_PAIR_NAME}.key"
    if not (cert_file.is_file() and key_file.is_file()):
        generated = generate_self_signed(bind_host, now)
        directory.mkdir(parents=True, exist_ok=True)
        _write_pair(cert_file, generated.cert_chain_pem, key_file, generated.key_pem)
    return str(cert_file), str(key_file)
