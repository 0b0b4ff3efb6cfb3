"""Calling a scheduler's secure port as different callers do: nobody, a token, a certificate.

The port's own certificate is self-signed at start-up, so it is not verified; what is under test
is how the port treats the caller.
"""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from pathlib import Path

TIMEOUT_S = 10.0


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
    tls = ssl.create_default_context()
    tls.check_hostname = False
    tls.verify_mode = ssl.CERT_NONE
    if client_cert is not None:
        tls.load_cert_chain(*client_cert)
    request = urllib.request.Request(f"https://127.0.0.1:{port}{path}", data=body, method=method)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S, context=tls) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as error:
        with error:
            return int(error.code), error.read().decode()


def secure_port_status(
    port: int,
    path: str,
    *,
    token: str | None = None,
    client_cert: tuple[Path, Path] | None = None,
) -> int:
    """The HTTP status of GET `path`; connection errors are raised."""
    return secure_port_call(port, path, token=token, client_cert=client_cert)[0]
