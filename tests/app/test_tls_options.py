"""--tls-min-version, --tls-cipher-suites and --cert-dir."""

from __future__ import annotations

import ssl
from datetime import UTC
from datetime import datetime
from pathlib import Path

import pytest

from scheduler.app.serving_cert import cert_dir_pair
from scheduler.app.tls_options import TLSOptions
from scheduler.framework.errors import ConfigError


def test_go_names_become_openssl_names_and_tls13_suites_are_accepted() -> None:
    options = TLSOptions.from_flags(
        "VersionTLS13",
        ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"],
    )
    assert options == TLSOptions(ssl.TLSVersion.TLSv1_3, ("ECDHE-RSA-AES128-GCM-SHA256",))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    options.apply(context)
    assert context.minimum_version is ssl.TLSVersion.TLSv1_3
    tls12 = {c["name"] for c in context.get_ciphers() if c["protocol"] == "TLSv1.2"}
    assert tls12 == {"ECDHE-RSA-AES128-GCM-SHA256"}


def test_the_default_is_tls12_and_the_library_ciphers() -> None:
    assert TLSOptions.from_flags("", []) == TLSOptions(ssl.TLSVersion.TLSv1_2, ())


@pytest.mark.parametrize(
    ("version", "suites", "message"),
    [
        ("TLS12", [], "--tls-min-version: unknown TLS version 'TLS12'"),
        ("", ["TLS_NOPE"], "--tls-cipher-suites: cipher suite TLS_NOPE not supported"),
    ],
)
def test_unknown_names_fail_naming_the_flag(version: str, suites: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        TLSOptions.from_flags(version, suites)


def test_cert_dir_pair_is_generated_once_and_then_reused(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    cert_file, key_file = cert_dir_pair(str(tmp_path / "certs"), "127.0.0.1", now)
    assert Path(cert_file).name == "kube-scheduler.crt"
    assert Path(key_file).stat().st_mode & 0o077 == 0
    first = Path(cert_file).read_bytes()
    assert cert_dir_pair(str(tmp_path / "certs"), "127.0.0.1", now) == (cert_file, key_file)
    assert Path(cert_file).read_bytes() == first
    ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(cert_file, key_file)
