"""The self-signed serving certificate made when no certificate files are given."""

from __future__ import annotations

import ipaddress
from datetime import UTC
from datetime import datetime
from datetime import timedelta

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID
from cryptography.x509.oid import NameOID

from scheduler.app.serving_cert import generate_self_signed
from scheduler.app.serving_cert import server_context_from_pem

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _names(cert: x509.Certificate) -> tuple[list[str], list[str]]:
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return (
        sans.get_values_for_type(x509.DNSName),
        [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)],
    )


@pytest.mark.parametrize(
    ("bind_host", "dns", "ips"),
    [
        pytest.param("0.0.0.0", ["localhost"], ["127.0.0.1"], id="wildcard-v4"),
        pytest.param("::", ["localhost"], ["127.0.0.1"], id="wildcard-v6"),
        pytest.param("127.0.0.1", ["localhost"], ["127.0.0.1"], id="loopback-not-repeated"),
        pytest.param("10.0.0.7", ["localhost"], ["127.0.0.1", "10.0.0.7"], id="bind-ip"),
        pytest.param("[fd00::1]", ["localhost"], ["127.0.0.1", "fd00::1"], id="bracketed-v6"),
        pytest.param("sched.example", ["localhost", "sched.example"], ["127.0.0.1"], id="name"),
    ],
)
def test_the_certificate_names_localhost_loopback_and_the_bind_address(
    bind_host: str, dns: list[str], ips: list[str]
) -> None:
    pair = generate_self_signed(bind_host, NOW)
    serving = x509.load_pem_x509_certificates(pair.cert_chain_pem)[0]
    assert _names(serving) == (dns, ips)


def test_the_chain_is_a_serving_certificate_signed_by_its_own_ca() -> None:
    pair = generate_self_signed("0.0.0.0", NOW)
    serving, ca_in_chain = x509.load_pem_x509_certificates(pair.cert_chain_pem)
    ca = x509.load_pem_x509_certificate(pair.ca_pem)
    assert ca_in_chain == ca
    serving.verify_directly_issued_by(ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert not serving.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    usages = serving.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usages) == [ExtendedKeyUsageOID.SERVER_AUTH]
    stamp = int(NOW.timestamp())
    common_name = serving.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    assert common_name == f"localhost@{stamp}"
    assert ca.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == (
        f"localhost-ca@{stamp}"
    )
    # Back-dated an hour against clock skew, valid for a year.
    assert serving.not_valid_before_utc == NOW - timedelta(hours=1)
    assert serving.not_valid_after_utc == NOW - timedelta(hours=1) + timedelta(days=365)


def test_every_start_gets_a_fresh_key_and_the_pair_loads() -> None:
    first, second = generate_self_signed("0.0.0.0", NOW), generate_self_signed("0.0.0.0", NOW)
    assert first.key_pem != second.key_pem
    assert first.key_pem.startswith(b"-----BEGIN PRIVATE KEY-----")
    context = server_context_from_pem(first.cert_chain_pem, first.key_pem)
    assert context.minimum_version.name == "TLSv1_2"


def test_loopback_is_an_ip_san_not_a_name() -> None:
    serving = x509.load_pem_x509_certificates(generate_self_signed("", NOW).cert_chain_pem)[0]
    sans = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("127.0.0.1") in sans.get_values_for_type(x509.IPAddress)
    assert "127.0.0.1" not in sans.get_values_for_type(x509.DNSName)
