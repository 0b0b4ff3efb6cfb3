"""Calling a scheduler's secure port as different callers do: nobody, a token, a certificate.

The port's own certificate is self-signed at start-up, so it is not verified; what is under test
is how the port treats the caller.
"""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

TIMEOUT_S = 10.0


@dataclass(frozen=True)
class SecurePortAnswer:
    status: int
    body: str
    headers: dict[str, str]


def secure_port_request(
    port: int,
    path: str,
    *,
    token: str | None = None,
    client_cert: tuple[Path, Path] | None = None,
    method: str = "GET",
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
) -> SecurePortAnswer:
    """One request to `path`; HTTP error statuses are answers, connection errors are raised."""
    tls = ssl.create_default_context()
    tls.check_hostname = False
    tls.verify_mode = ssl.CERT_NONE
    if client_cert is not None:
        tls.load_cert_chain(*client_cert)
    request = urllib.request.Request(
        f"https://127.0.0.1:{port}{path}", data=body, method=method, headers=dict(headers or {})
    )
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S, context=tls) as response:
            return SecurePortAnswer(
                int(response.status), response.read().decode(), dict(response.headers)
            )
    except urllib.error.HTTPError as error:
        with error:
            return SecurePortAnswer(int(error.code), error.read().decode(), dict(error.headers))


def secure_port_call(
    port: int,
    path: str,
    *,
    token: str | None = None,
    client_cert: tuple[Path, Path] | None = None,
    method: str = "GET",
    body: bytes | None = None,
) -> tuple[int, str]:
    """The HTTP status and body of `method` on `path`; connection errors are raised."""
    answer = secure_port_request(
        port, path, token=token, client_cert=client_cert, method=method, body=body
    )
    return answer.status, answer.body


def secure_port_status(
    port: int,
    path: str,
    *,
    token: str | None = None,
    client_cert: tuple[Path, Path] | None = None,
) -> int:
    """The HTTP status of GET `path`; connection errors are raised."""
    return secure_port_call(port, path, token=token, client_cert=client_cert)[0]
