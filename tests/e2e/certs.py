"""Throw-away PKI for a test control plane: one CA, a serving cert, client certs, SA keys.

Everything lives for a day and is written next to the processes that use it. One CA signs both
the serving and the client certificates; tests have no reason to keep them apart.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID
from cryptography.x509.oid import NameOID

VALIDITY = datetime.timedelta(days=1)
# Clocks of the signer and the verifier are the same here, but a little slack costs nothing.
BACKDATE = datetime.timedelta(minutes=5)

PrivateKey: TypeAlias = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


@dataclass(frozen=True)
class KeyPair:
    """A PEM certificate with its PEM private key."""

    cert_pem: bytes
    key_pem: bytes

    def write(self, cert_path: Path, key_path: Path) -> None:
        cert_path.write_bytes(self.cert_pem)
        key_path.write_bytes(self.key_pem)
        key_path.chmod(0o600)


@dataclass(frozen=True)
class CertificateAuthority:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @classmethod
    def create(cls, common_name: str = "kube-pyscheduler-e2e-ca") -> CertificateAuthority:
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        builder = (
            _base_builder(name, key)
            .issuer_name(name)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
        )
        return cls(cert=builder.sign(key, hashes.SHA256()), key=key)

    @property
    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def issue_serving(self, dns_names: list[str], ips: list[str]) -> KeyPair:
        """A server certificate valid for the given host names and IP addresses."""
        key = ec.generate_private_key(ec.SECP256R1())
        names: list[x509.GeneralName] = [x509.DNSName(dns) for dns in dns_names]
        names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns_names[0])])
        builder = self._leaf_builder(subject, key, ExtendedKeyUsageOID.SERVER_AUTH).add_extension(
            x509.SubjectAlternativeName(names), critical=False
        )
        return _pair(builder.sign(self.key, hashes.SHA256()), key)

    def issue_client(self, user: str, groups: list[str]) -> KeyPair:
        """A client certificate: kube-apiserver reads the user from CN and groups from O."""
        key = ec.generate_private_key(ec.SECP256R1())
        attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, group) for group in groups]
        attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, user))
        builder = self._leaf_builder(x509.Name(attributes), key, ExtendedKeyUsageOID.CLIENT_AUTH)
        return _pair(builder.sign(self.key, hashes.SHA256()), key)

    def _leaf_builder(
        self, subject: x509.Name, key: PrivateKey, usage: x509.ObjectIdentifier
    ) -> x509.CertificateBuilder:
        return (
            _base_builder(subject, key)
            .issuer_name(self.cert.subject)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )


def service_account_key_pair() -> KeyPair:
    """The RSA pair kube-apiserver signs ServiceAccount tokens with; "cert" is the public key."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return KeyPair(cert_pem=public_pem, key_pem=_key_pem(key))


def _base_builder(subject: x509.Name, key: PrivateKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + VALIDITY)
    )


def _key_pem(key: PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _pair(cert: x509.Certificate, key: PrivateKey) -> KeyPair:
    return KeyPair(cert_pem=cert.public_bytes(serialization.Encoding.PEM), key_pem=_key_pem(key))
